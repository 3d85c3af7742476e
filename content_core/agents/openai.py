"""OpenAICompatibleAgent: `/v1/chat/completions` over httpx with JSON-schema structured output.

Works with OpenAI and with servers that speak the same protocol (vLLM, Ollama, llama.cpp
server). Retries 429 and 5xx with exponential backoff, honouring `Retry-After`; validates the
reply against the output schema.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from content_core._http_retry import backoff_s, retry_after_s
from content_core.agents.base import AgentResult, Usage
from content_core.agents.schemas import ExtractedFacts
from content_core.errors import LLMError, LLMOutputError, LLMUnavailableError
from content_core.tokens import default_estimator, get_model_limits

__all__ = ["OpenAICompatibleAgent", "model_limits"]

logger = logging.getLogger(__name__)

# Blank lines inside the fence stay in the JSON (harmless); `\n\s*```` would rescan a long run
# of newlines from each of them.
_FENCE = re.compile(r"^\s*+```(?:json)?[^\S\n]*+\n(.*?)\n[^\S\n]*+```\s*+$", re.DOTALL)
# Open reasoning models served locally (Qwen3, DeepSeek-R1) may prefix the answer with this.
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)
_MESSAGE_OVERHEAD_TOKENS = 4
# OpenAI reasoning models refuse `temperature` and `max_tokens` (they take
# `max_completion_tokens`); the name may carry a provider prefix ("openai/o3-mini").
_REASONING_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)(?![\w.]*-chat)", re.IGNORECASE)


def model_limits(
    model: str, *, limits_file: str | os.PathLike[str] | None = None
) -> tuple[int, int]:
    """(max_input, max_output) tokens for `model` from the limits table (the packaged rows plus
    `limits_file` or `$CONTENT_MODEL_LIMITS`); an unknown model gets the table's default.

    Raises:
        ConfigError: the user limits file is unreadable or invalid.
    """
    limits = get_model_limits(model, limits_file=limits_file)
    return limits.max_input, limits.max_output


class OpenAICompatibleAgent:
    """An agent over an OpenAI-compatible chat-completions endpoint.

    `run(prompt)` sends the prompt as the user message (after `system_prompt`, if any) and
    asks for JSON matching `output_type` through `response_format` `json_schema`; with
    `output_type=str` it returns the reply text. `base_url` includes the API prefix, as with
    OpenAI's clients (`https://api.openai.com/v1`, `http://localhost:11434/v1`).

    At most `concurrency` requests are in flight per event loop. Timeouts, transport errors,
    429 and 5xx are retried up to `max_retries` times with exponential backoff and jitter, or
    after the `Retry-After` the server sent (capped at `max_retry_after_s`). The model's window
    comes from the limits table; `limits_file` (a TOML file, see content_core.model_limits)
    adds or corrects its row.

    Raises (from `run`): `LLMUnavailableError` when retries are exhausted, `LLMOutputError`
    when the reply does not validate, `LLMError` for other refusals (4xx, prompt too long).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        output_type: type[BaseModel] | type[str] = ExtractedFacts,
        system_prompt: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        concurrency: int = 8,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        max_output_tokens: int | None = None,
        temperature: float | None = 0.0,  # dropped for reasoning models, which refuse it
        strict_schema: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        limits_file: str | os.PathLike[str] | None = None,
    ) -> None:
        if concurrency < 1 or max_retries < 0 or timeout_s <= 0:
            raise ValueError("need concurrency >= 1, max_retries >= 0, timeout_s > 0")
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.output_type = output_type
        self.system_prompt = system_prompt
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.reasoning = _REASONING_MODEL.match(model) is not None
        self.temperature = None if self.reasoning else temperature
        self.strict_schema = strict_schema
        self._transport = transport
        self.limits = model_limits(model, limits_file=limits_file)
        if max_output_tokens is not None and self.limits is not None:
            max_output_tokens = min(max_output_tokens, self.limits[1])
        self.max_output_tokens = max_output_tokens
        # Built once: generating a JSON Schema per call costs more than the call's own parsing.
        self._response_format: dict[str, Any] | None = None
        self._schema: type[BaseModel] | None = None
        if isinstance(output_type, type) and issubclass(output_type, BaseModel):
            self._schema = output_type
            self._response_format = {
                "type": "json_schema",
                "json_schema": {
                    "name": re.sub(r"[^A-Za-z0-9_-]", "_", output_type.__name__)[:64],
                    "schema": _schema_for(output_type, strict=strict_schema),
                    "strict": strict_schema,
                },
            }
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None

    # httpx clients and asyncio semaphores belong to one event loop; a sync caller that runs
    # asyncio.run() per batch gets a fresh pair per loop.
    def _bind(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._client is None or self._semaphore is None:
            self._loop = loop
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s),
                limits=httpx.Limits(max_connections=self.concurrency),
                transport=self._transport,
                # A plain-http endpoint (a local vLLM or Ollama) needs no TLS context, whose
                # construction (loading the CA bundle) costs ~0.1 s per event loop.
                verify=self.url.startswith("https://"),
            )
            self._semaphore = asyncio.Semaphore(self.concurrency)
        return self._client, self._semaphore

    async def aclose(self) -> None:
        """Close the HTTP client of the current event loop."""
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None
        self._loop = None

    async def __aenter__(self) -> OpenAICompatibleAgent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def request_body(
        self, prompt: str, messages: Sequence[Mapping[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The JSON body `run` posts for `prompt` (or for ready-made `messages`)."""
        # Any: chat-completions JSON is heterogeneous by nature.
        if messages is None:
            chat: list[Mapping[str, Any]] = []
            if self.system_prompt:
                chat.append({"role": "system", "content": self.system_prompt})
            chat.append({"role": "user", "content": prompt})
        else:
            chat = list(messages)
        body: dict[str, Any] = {"model": self.model, "messages": chat}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_output_tokens is not None:
            key = "max_completion_tokens" if self.reasoning else "max_tokens"
            body[key] = self.max_output_tokens
        if self._response_format is not None:
            body["response_format"] = self._response_format
        return body

    async def run(
        self,
        prompt: str,
        *,
        messages: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> AgentResult[Any]:
        """Call the endpoint for `prompt` and return the validated output with its usage."""
        # Any: the output is an instance of output_type; kwargs exist only for the contract.
        if kwargs:
            raise TypeError(f"unexpected keyword arguments: {sorted(kwargs)}")
        if messages is not None:
            # Prepared ChatMessage models (see prepare_messages) serialise themselves.
            messages = [m.to_openai() if hasattr(m, "to_openai") else m for m in messages]
        body = self.request_body(prompt, messages)
        self._check_input_size(body)
        response = await self._post(body)
        return self._parse(response, body)

    def _check_input_size(self, body: dict[str, Any]) -> None:
        if self.limits is None:
            return
        texts = [m["content"] for m in body["messages"] if isinstance(m.get("content"), str)]
        # A BPE token spans at least one UTF-8 byte, so short prompts need no exact count.
        if sum(len(t.encode()) + _MESSAGE_OVERHEAD_TOKENS for t in texts) <= self.limits[0]:
            return
        estimator = default_estimator()
        tokens = sum(
            estimator.estimate(m["content"]) + _MESSAGE_OVERHEAD_TOKENS
            for m in body["messages"]
            if isinstance(m.get("content"), str)
        )
        if tokens > self.limits[0]:
            raise LLMError(
                f"prompt has {tokens} tokens; {self.model} accepts {self.limits[0]}",
                stage="extract",
            )

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        client, semaphore = self._bind()
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            async with semaphore:
                try:
                    response = await client.post(self.url, json=body, headers=headers)
                except httpx.TimeoutException as exc:
                    error = LLMUnavailableError(f"{self.url} timed out after {self.timeout_s}s")
                    cause: BaseException | None = exc
                except httpx.TransportError as exc:
                    error = LLMUnavailableError(f"{self.url} unreachable: {exc}")
                    cause = exc
                else:
                    status = response.status_code
                    if status < 400:
                        return response
                    detail = response.text[:300]
                    if status != 429 and status < 500:
                        raise LLMError(f"{self.url} refused the request ({status}): {detail}")
                    error = LLMUnavailableError(f"{self.url} answered {status}: {detail}")
                    cause = None
                    wait = retry_after_s(response)
            if attempt == self.max_retries:
                raise error from cause
            if wait is None:
                wait = backoff_s(attempt, self.backoff_s, self.max_backoff_s)
            wait = min(wait, self.max_retry_after_s)
            logger.info("retrying %s in %.2fs (attempt %d): %s", self.url, wait, attempt + 1, error)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _parse(self, response: httpx.Response, body: dict[str, Any]) -> AgentResult[Any]:
        try:
            data = response.json()
            message = data["choices"][0]["message"]
            content = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMOutputError(
                f"malformed chat-completions reply: {response.text[:200]!r}", stage="extract"
            ) from exc
        truncated = data["choices"][0].get("finish_reason") == "length"
        if message.get("refusal"):
            raise LLMOutputError(f"the model refused: {message['refusal']}", stage="extract")
        if not isinstance(content, str):
            raise LLMOutputError("the reply has no text content", stage="extract")
        usage = self._usage(data, body, content)
        model = str(data.get("model") or self.model)
        if self._schema is None:
            return AgentResult(output=content, model=model, usage=usage)
        answer = _THINK.sub("", content, count=1)
        fenced = _FENCE.match(answer)
        text = fenced.group(1) if fenced else answer
        try:
            output = self._schema.model_validate_json(text)
        except ValidationError as exc:
            cut = " (the reply was cut at the output token limit)" if truncated else ""
            raise LLMOutputError(
                f"reply does not validate against {self._schema.__name__}{cut}: "
                f"{exc.error_count()} error(s), first: {exc.errors()[0]['msg']}",
                stage="extract",
            ) from exc
        return AgentResult(output=output, model=model, usage=usage)

    @staticmethod
    def _usage(data: Mapping[str, Any], body: dict[str, Any], content: str) -> Usage:
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            prompt = usage.get("prompt_tokens")
            completion = usage.get("completion_tokens")
            if isinstance(prompt, int) and isinstance(completion, int):
                return Usage(prompt_tokens=prompt, completion_tokens=completion)
        # Some servers omit usage: estimate so cost metadata is not silently zero.
        estimator = default_estimator()
        prompt_tokens = sum(
            estimator.estimate(json.dumps(m.get("content"), ensure_ascii=False))
            for m in body["messages"]
        )
        return Usage(prompt_tokens=prompt_tokens, completion_tokens=estimator.estimate(content))


def _schema_for(output_type: type[BaseModel], *, strict: bool) -> dict[str, Any]:
    schema = output_type.model_json_schema()
    return _strictify(schema) if strict else schema


def _strictify(node: Any) -> Any:  # Any: arbitrary JSON Schema nodes
    """OpenAI strict mode: every object closed and every property listed as required."""
    if isinstance(node, dict):
        out = {k: _strictify(v) for k, v in node.items() if k != "default"}
        if out.get("type") == "object" and "properties" in out:
            out["additionalProperties"] = False
            out["required"] = list(out["properties"])
        return out
    if isinstance(node, list):
        return [_strictify(v) for v in node]
    return node
