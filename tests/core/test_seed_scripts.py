"""The seeds' Python examples as people run them: each written to a file as a plain script,
with no `if __name__ == "__main__":` guard, its imports pointed at `content_core`, run in a
fresh interpreter, and its documented output checked.

A worker process (forkserver or spawn) runs the calling script again from its top; an
unguarded script that indexed through the worker pool once got 0 chunks and no hits, with no
error. Now the pool is not started for such a script (the work runs in its own process, with
one warning saying how to get the time limits back).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.cli import REPO

# A script ingests a document through every stage in its own interpreter.
pytestmark = pytest.mark.timeout(600)


def _run(tmp_path: Path, name: str, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / name
    script.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        encoding="utf-8",
        timeout=540,
    )


# Seed 002, "Hierarchical chunker": `embed`, `store` and `contract_text` are the reader's own;
# here no embedder (BM25), a fresh store folder and a contract of five sections.
_CONTRACT = "\n\n".join(
    [
        f"Section {i}. Delivery of lot {i}. The supplier ships the goods of lot {i} in the first "
        "week of each month. Each lot comes with an invoice; each crate has its own packing "
        "list, signed by the carrier on arrival. Late lots are credited at two percent a week."
        for i in range(1, 5)
    ]
    + [
        "Section 5. Termination. The agreement may be terminated by either party with 30 days "
        "notice, under the termination conditions set out in this section."
    ]
)
_HIERARCHICAL = f"""
    import tempfile

    from content_core import RAG

    embed = None
    store = tempfile.mkdtemp(dir=".")
    contract_text = {_CONTRACT!r}

    rag = RAG(
        embed=embed,
        store=store,
        chunker="hierarchical",
        chunk_size=200,
        chunk_overlap=20,
        parent_chunk_size=1500,
    )

    rag.index(contract_text, source="contract")
    hits = rag.search("termination conditions")

    for hit in hits:
        print(f"Child: {{hit.content[:80]}}...")
        print(f"Parent: {{hit.parent_content[:80]}}...")
"""


def test_the_hierarchical_rag_example_runs_as_a_plain_script(tmp_path: Path) -> None:
    done = _run(tmp_path, "hierarchical.py", _HIERARCHICAL)

    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    children = [line for line in lines if line.startswith("Child: ")]
    parents = [line for line in lines if line.startswith("Parent: ")]
    assert children and len(children) == len(parents), done.stdout
    # What it prints is the contract's own text (sizes are tokens here, so the contract of
    # about 250 tokens is one parent of two children; the second holds "Termination").
    contract = " ".join(_CONTRACT.split())
    for line in children + parents:
        shown = line.split(": ", 1)[1].removesuffix("...")
        assert len(shown) == 80 and " ".join(shown.split()) in contract, line
    # It says once why no worker was started, and nothing else went wrong.
    assert "guard" in done.stderr and "Traceback" not in done.stderr


def test_the_recursive_chunker_example_prints_its_documented_offsets(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        "recursive.py",
        '''
        from content_core import RecursiveChunker, list_chunkers

        print(list_chunkers())

        chunker = RecursiveChunker(chunk_size=100, chunk_overlap=20)

        text = "Python is a programming language. " * 20
        chunks = chunker.chunk(text)

        for c in chunks[:3]:
            print(f"chunk {c.chunk_index}: chars {c.start_char}-{c.end_char}, len={len(c.content)}")
        ''',
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The seed's five strategies come first (the pipeline's own follow them).
    assert lines[0].startswith("['character', 'recursive', 'markdown', 'code', 'hierarchical'")
    assert lines[1] == "chunk 0: chars 0-100, len=100"
    assert lines[2].startswith("chunk 1: chars 92-170, len=")
    assert lines[3].startswith("chunk 2: chars 160-238, len=")


def test_a_guarded_script_still_gets_the_worker_pool(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        "guarded.py",
        '''
        import logging

        from content_core.sandbox import workers_can_start


        def main() -> None:
            print("pool" if workers_can_start() else "here")


        if __name__ == "__main__":
            main()
        ''',
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pool" and "guard" not in done.stderr
