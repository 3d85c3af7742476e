"""End to end: `content-pipeline show CHUNK_ID` prints a chunk's pages and boxes, and with
`--png` draws its page with the boxes highlighted; a chunk without boxes or an unknown id is
a usage error (exit code 2)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pypdfium2 as pdfium
from PIL import Image, ImageChops

from content_core.store import ContentStore
from tests.support.cli import run_cli

CORPUS = Path(__file__).parents[1] / "corpus"
PDF = CORPUS / "pdf" / "multi-column-2p.pdf"
# The outline is drawn 2 pixels wide around each box.
_OUTLINE_PX = 3


def test_show_prints_and_draws_a_chunks_boxes(tmp_path: Path) -> None:
    folder, store, home = tmp_path / "inbox", tmp_path / "store", tmp_path / "home"
    folder.mkdir()
    shutil.copy(PDF, folder)
    (folder / "notes.txt").write_text("SHOW-NOTES plain text has no boxes on a page.\n")
    done = run_cli("ingest", str(folder), home=home, store=store)
    assert done.returncode == 0, done.stdout + done.stderr
    chunks = (
        ContentStore(store)
        .query("SELECT chunk_id, path, page_start, page_end, boxes FROM current_chunks "
               "WHERE content IS NOT NULL ORDER BY path, index")
        .to_pylist()
    )  # fmt: skip
    [note] = [c for c in chunks if c["path"] == "notes.txt"]
    assert note["boxes"] == []
    pdf_chunks = [c for c in chunks if c["path"] == PDF.name]
    assert all(c["boxes"] for c in pdf_chunks)
    chunk = next(c for c in pdf_chunks if c["page_start"] == c["page_end"] == 2)
    boxes = chunk["boxes"]

    shown = run_cli("show", chunk["chunk_id"], home=home, store=store)
    assert shown.returncode == 0, shown.stderr
    assert "page 2" in shown.stdout and f"boxes ({len(boxes)}, pt" in shown.stdout
    first = boxes[0]
    assert f"p.2  {first['x0']:.1f} {first['y0']:.1f}" in shown.stdout

    out = tmp_path / "chunk.png"
    drawn = run_cli("show", chunk["chunk_id"], "--png", str(out), "--scale", "1",
                    home=home, store=store)  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    image = Image.open(io.BytesIO(out.read_bytes())).convert("RGB")
    page = pdfium.PdfDocument(PDF)[1]
    left, _, right, top = page.get_cropbox()
    plain = page.render(scale=1).to_pil().convert("RGB")
    assert image.size == plain.size
    assert abs(image.width - (right - left)) <= 1 and abs(image.height - page.get_height()) <= 1
    # Every pixel the highlight changed lies in a box (its outline included), and every box
    # changed pixels.
    changed = ImageChops.difference(image, plain).convert("L").point(lambda v: 255 if v else 0)
    rects = [(b["x0"] - left, top - b["y1"], b["x1"] - left, top - b["y0"]) for b in boxes]
    inside = Image.new("L", image.size, 0)
    for x0, y0, x1, y1 in rects:
        area = (round(x0) - _OUTLINE_PX, round(y0) - _OUTLINE_PX,
                round(x1) + _OUTLINE_PX, round(y1) + _OUTLINE_PX)  # fmt: skip
        inside.paste(255, area)
        assert changed.crop(area).getbbox() is not None
    outside = ImageChops.subtract(changed, inside)
    assert outside.getbbox() is None, "highlighted pixels outside the boxes"

    missing = run_cli("show", "no-such-chunk", home=home, store=store)
    assert missing.returncode == 2 and "no chunk 'no-such-chunk'" in missing.stderr
    boxless = run_cli("show", note["chunk_id"], "--png", str(tmp_path / "n.png"),
                      home=home, store=store)  # fmt: skip
    assert boxless.returncode == 2 and "has no boxes" in boxless.stderr
    assert not (tmp_path / "n.png").exists()
    text = run_cli("show", note["chunk_id"], home=home, store=store)
    assert text.returncode == 0 and "boxes: none" in text.stdout and "SHOW-NOTES" in text.stdout
