"""ImageTiler: tile geometry for images larger than a vision model's pixel budget."""

from __future__ import annotations

import math

from content_core.chunking.base import Chunk

__all__ = ["ImageTiler"]


class ImageTiler:
    """Computes overlapping tiles that cover an image, row by row.

    Tiles step by `tile_width - overlap` (and `tile_height - overlap`); the last tile of a row
    or column is shifted back to end on the image's edge, so every tile has the full size
    unless the image itself is smaller.
    """

    def __init__(self, *, tile_width: int = 1024, tile_height: int = 1024, overlap: int = 128):
        if tile_width < 1 or tile_height < 1:
            raise ValueError("tile_width and tile_height must be positive")
        if overlap < 0 or overlap >= min(tile_width, tile_height):
            raise ValueError("overlap must be non-negative and smaller than the tile")
        self.tile_width = tile_width
        self.tile_height = tile_height
        self.overlap = overlap

    @staticmethod
    def _starts(length: int, tile: int, overlap: int) -> list[int]:
        if length <= tile:
            return [0]
        step = tile - overlap
        count = math.ceil((length - tile) / step) + 1
        starts = [i * step for i in range(count)]
        starts[-1] = length - tile
        return sorted(set(starts))

    def compute_tiles(self, image_width: int, image_height: int) -> list[Chunk]:
        """Return one `Chunk` per tile; metadata has x, y, width, height, row and col.

        `source_start`/`source_end` are the row-major pixel offsets of the tile's first and
        one-past-last pixel (y * image_width + x).
        """
        if image_width < 1 or image_height < 1:
            raise ValueError("image dimensions must be positive")
        xs = self._starts(image_width, self.tile_width, self.overlap)
        ys = self._starts(image_height, self.tile_height, self.overlap)
        total = len(xs) * len(ys)
        tiles: list[Chunk] = []
        for row, y in enumerate(ys):
            height = min(self.tile_height, image_height - y)
            for col, x in enumerate(xs):
                width = min(self.tile_width, image_width - x)
                tiles.append(
                    Chunk(
                        content=f"tile {row},{col}: x={x} y={y} {width}x{height}",
                        index=len(tiles),
                        total_chunks=total,
                        source_start=y * image_width + x,
                        source_end=(y + height - 1) * image_width + x + width,
                        metadata={
                            "x": x,
                            "y": y,
                            "width": width,
                            "height": height,
                            "row": row,
                            "col": col,
                        },
                    )
                )
        return tiles
