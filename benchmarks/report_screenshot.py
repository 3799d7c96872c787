"""Render a real parity report (a converted model with a re-injected GELU trap) to HTML and screenshot it with
headless Chromium, to check by eye that the page and its SVG plot display offline.

    .venv/bin/python benchmarks/report_screenshot.py [-o build/parity-report.png]

Needs a `chromium` (or `chromium-browser` / `google-chrome`) executable; exits 2 with a message when none is found.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", default=str(REPO / "build" / "parity-report.png"))
    parser.add_argument("--html", default=str(REPO / "build" / "parity-report.html"))
    args = parser.parse_args()
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
                   None)
    if browser is None:
        print("no chromium executable found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    from mindport.migrator import convert_source
    from mindport.validators.parity.compare import validate, write_reports

    torch_file = REPO / "tests" / "parity" / "models" / "convnet.py"
    with tempfile.TemporaryDirectory() as tmp:
        code = convert_source(torch_file.read_text(), "convnet.py").code
        assert "approximate=False" in code
        ms_file = Path(tmp) / "convnet_ms.py"
        ms_file.write_text(code.replace("approximate=False", "approximate=True"))
        report = validate(f"{torch_file}:ConvNet", f"{ms_file}:ConvNet", inputs=["2x3x16x16:float32"])
    html = Path(args.html)
    write_reports(report, [html])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={out}", "--window-size=1280,2200", html.resolve().as_uri()],
                   check=True, capture_output=True, timeout=120)
    print(f"report: {html}\nscreenshot: {out} ({out.stat().st_size} bytes); first divergent: "
          f"{report.first_divergent.path} - {report.first_divergent.cause}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
