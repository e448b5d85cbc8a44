"""Draw the plugin icon (a stylised anchor on a teal tile) as a 512x512 PNG with the stdlib only."""

from __future__ import annotations

import math
import struct
import sys
import zlib

SIZE = 512


def _inside_anchor(x: float, y: float) -> bool:
    """Return True where the anchor glyph covers the pixel centre (x, y) in unit coordinates."""
    ring = math.hypot(x - 0.5, y - 0.2)
    if 0.055 <= ring <= 0.095:
        return True
    if abs(x - 0.5) <= 0.035 and 0.28 <= y <= 0.8:
        return True
    if abs(y - 0.36) <= 0.03 and 0.33 <= x <= 0.67:
        return True
    arc = math.hypot(x - 0.5, y - 0.52)
    return 0.26 <= arc <= 0.32 and y >= 0.6


def _pixel(px: int, py: int) -> bytes:
    x, y = (px + 0.5) / SIZE, (py + 0.5) / SIZE
    if _inside_anchor(x, y):
        return bytes((245, 248, 250))
    shade = int(40 + 50 * y)
    return bytes((16, shade + 60, shade + 70))


def render() -> bytes:
    rows = b"".join(b"\x00" + b"".join(_pixel(px, py) for px in range(SIZE)) for py in range(SIZE))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as out:
        out.write(render())
