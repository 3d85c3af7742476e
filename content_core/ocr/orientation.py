"""Page orientation (0/90/180/270) from the ink's projection profiles, then the engine's
confidence.

Lines of text make the row profile of an upright (or upside-down) page alternate between ink
and gaps, while its column profile stays flat; a page turned by 90 degrees shows the reverse.
That settles 0/180 against 90/270 from pixels alone. Which of the two left is upright comes
from the lines' shape: Latin letters rise above the x-height (b, d, h, k, l, t, capitals) more
often than they drop below it (g, j, p, q, y), so an upright line has more ink above its core
than below. The engine reads the likelier one, and the other only when the first reading's
confidence is low (text upside down reads as noise; other scripts may fool the shape test),
so a page costs one recognition unless the pixels misled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

__all__ = ["is_blank", "orient", "rotation_candidates", "rotated"]

_PROBE_SIDE_PX = 800
# The probe is a box-averaged reduction, where a thin stroke is a light grey: any pixel clearly
# darker than the paper (the page's median, white or not) counts as ink (measured on generated
# pages, 150 to 300 DPI, 9 and 12 pt).
_INK_BELOW_PAPER = 25
# Share of dark pixels below which a page counts as blank (scanner dust, a stray line).
_MIN_INK_SHARE = 0.0005


def _ink(image: PilImage) -> object:
    """Dark pixels of `image` shrunk to about `_PROBE_SIDE_PX` (box averages: fast)."""
    import numpy as np

    probe = image.convert("L") if image.mode != "L" else image
    factor = -(-max(probe.size) // _PROBE_SIDE_PX)
    if factor > 1:
        probe = probe.reduce(factor)
    pixels = np.asarray(probe)
    return pixels < float(np.median(pixels)) - _INK_BELOW_PAPER


def orient(image: PilImage) -> tuple[int, int] | None:
    """`rotation_candidates` of `image`, or None when it is blank (nothing to read)."""
    import numpy as np

    ink = np.asarray(_ink(image))
    if ink.mean() < _MIN_INK_SHARE:
        return None
    return _candidates(ink)


def is_blank(image: PilImage) -> bool:
    """Return True when the image holds (almost) no dark pixels: nothing to read."""
    return orient(image) is None


def rotation_candidates(image: PilImage) -> tuple[int, int]:
    """The two counter-clockwise rotations (degrees) that may make `image` upright, the
    likelier first: (0, 180) for horizontal lines of text, (90, 270) for vertical ones."""
    return _candidates(_ink(image))


def _candidates(dark: object) -> tuple[int, int]:
    import numpy as np

    ink = np.asarray(dark, dtype=np.float64)
    rows, cols = np.nonzero(ink)
    if rows.size == 0:
        return (0, 180)
    # Only the inked box: blank margins would make both profiles look uneven.
    ink = ink[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    first, second = (
        (0, 180) if _unevenness(ink.sum(axis=1)) >= _unevenness(ink.sum(axis=0)) else (90, 270)
    )
    # np.rot90 turns counter-clockwise, as `rotated` does.
    upright = np.rot90(ink, k=first // 90)
    return (first, second) if _rise_over_drop(upright.sum(axis=1)) >= 0 else (second, first)


def _rise_over_drop(profile: object) -> float:
    """Ink above the cores of the lines minus ink below them (positive when upright)."""
    import numpy as np

    values = np.asarray(profile, dtype=np.float64)
    inked = values > 0.02 * values.max() if values.size else values
    score, start = 0.0, None
    for index, on in enumerate([*inked.tolist(), False]):
        if on and start is None:
            start = index
        elif not on and start is not None:
            line = values[start:index]
            core = np.nonzero(line >= 0.5 * line.max())[0]
            score += float(line[: core[0]].sum() - line[core[-1] + 1 :].sum())
            start = None
    return score


def _unevenness(profile: object) -> float:
    """Mean squared step between neighbours relative to the mean level: high where lines of
    ink alternate with gaps."""
    import numpy as np

    values = np.asarray(profile, dtype=np.float64)
    if values.size < 2 or values.mean() == 0:
        return 0.0
    return float(np.mean(np.diff(values) ** 2) / values.mean() ** 2)


def rotated(image: PilImage, degrees: int) -> PilImage:
    """`image` turned counter-clockwise by `degrees` (a multiple of 90), losslessly."""
    from PIL import Image

    if degrees % 360 == 0:
        return image
    transpose = {
        90: Image.Transpose.ROTATE_90,
        180: Image.Transpose.ROTATE_180,
        270: Image.Transpose.ROTATE_270,
    }[degrees % 360]
    return image.transpose(transpose)
