"""What reading media adds to a daemon: the start-up time and memory of importing Pillow
(PIL.Image) and pypdf, each in a fresh interpreter, beside one that imports only the
agent; and, once loaded, the time to clean a 12-megapixel phone photo (EXIF off,
downscaled to 1568 px, JPEG) and to read a 50-page PDF's text.

kioku imports both only when a file arrives (agent/media/images.py, documents.py), so
a daemon nobody sends a file to pays nothing.

    .venv/bin/python tests/bench/bench_media_imports.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.import_cost import import_cost  # noqa: E402

CASES = (
    ("agent only", "pass"),
    ("+ PIL.Image", "import PIL.Image"),
    ("+ pypdf", "import pypdf"),
    ("+ both", "import PIL.Image, pypdf"),
)


def reading_cost(runs: int) -> tuple[float, float]:
    """Median seconds to clean a 4032x3024 photo and to read a 50-page PDF."""
    from agent.media.documents import DocumentLimits, read_document
    from agent.media.images import clean_image, image_limit
    from agent.media.items import Incoming
    from tests.helpers.media_files import jpeg_with_gps, pdf_with_text

    photo = jpeg_with_gps(4032, 3024)
    pdf = Incoming("document", "a.pdf", "application/pdf", pdf_with_text(*["words " * 80] * 50))
    limits = DocumentLimits(chars=50_000, native_pdf=False)
    photos, pdfs = [], []
    for _ in range(runs):
        started = time.perf_counter()
        clean_image(photo, max_side=1568, limit=image_limit("anthropic"), max_pixels=50_000_000)
        photos.append(time.perf_counter() - started)
        started = time.perf_counter()
        read_document(pdf, limits)
        pdfs.append(time.perf_counter() - started)
    return statistics.median(photos), statistics.median(pdfs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    print(f"import cost after `import agent.agent` (fresh interpreter, median of {args.runs})")
    print(f"  {'case':<14} {'added ms':>9} {'peak RSS MB':>12} {'added MB':>9}")
    base_rss = 0.0
    for label, imports in CASES:
        seconds, rss = import_cost(imports, args.runs)
        base_rss = base_rss or rss
        print(f"  {label:<14} {seconds * 1000:9.0f} {rss:12.1f} {rss - base_rss:9.1f}")
    photo, pdf = reading_cost(args.runs)
    print(f"\nclean a 4032x3024 JPEG to 1568 px: {photo * 1000:.0f} ms")
    print(f"read the text of a 50-page PDF: {pdf * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
