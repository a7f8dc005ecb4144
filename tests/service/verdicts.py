"""The three verifiers of the tampering matrix, each run as an auditor would run it, on files:

- ``donjon verify FILE --key PUBKEY`` in a child process (pinned to the deployment's key);
- the JavaScript verifier (``clients/js/src/audit.js`` ``verifyExportText``) in one ``node`` child for
  every file, pinned to the saved body of the deployment's ``GET /keys``;
- the web app's audit panel in Chromium, on a real ``donjon serve``: every file loaded in turn into
  "Verify a file you have" on one page (the panel pins to that deployment's ``GET /keys`` itself).

Each gives one of :data:`tests.service.tampering.ACCEPT`, ``LEGACY``, ``REFUSE``, or ``"crash"`` (a
traceback or no verdict) with what it said.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.service.tampering import ACCEPT, LEGACY, REFUSE

ROOT = Path(__file__).resolve().parents[2]
CRASH = "crash"

Verdict = tuple[str, str]


def python_verdict(path: Path, public_key: str) -> Verdict:
    """``donjon verify``: 0 is accepted (legacy when it says so), 1 or 2 with a message and no
    traceback is refused, anything else a crash."""
    command = [sys.executable, "-m", "service", "verify", str(path), "--key", public_key]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return CRASH, "no verdict within 180 s"
    said = (done.stdout + done.stderr).strip()
    if "Traceback" in done.stderr:
        return CRASH, said[-400:]
    if done.returncode == 0:
        return (LEGACY if "legacy: weaker guarantees" in done.stdout else ACCEPT), said[:400]
    if done.returncode in (1, 2) and said:
        return REFUSE, said[:400]
    return CRASH, f"exit {done.returncode}: {said[:400]}"


def python_verdicts(paths: dict[str, Path], public_key: str) -> dict[str, Verdict]:
    # Two at a time: the machine has two cores, and each child re-runs a whole game.
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(python_verdict, path, public_key) for name, path in paths.items()}
        return {name: future.result() for name, future in futures.items()}


JS_RUNNER = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [audit, casesFile, keysFile] = process.argv.slice(1);
const { verifyExportText } = await import(pathToFileURL(audit).href);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const trustedKeys = JSON.parse(readFileSync(keysFile, "utf8"));
const out = {};
for (const [name, path] of Object.entries(cases)) {
  try {
    const r = await verifyExportText(readFileSync(path, "utf8"), { trustedKeys });
    const failed = r.checks.find((c) => !c.ok);
    const said = failed ? `${failed.name}: ${failed.detail}` : `${r.verdict} (signer ${r.signer})`;
    const verdict = !r.ok ? "refuse" : r.legacy ? "legacy" : r.signer === "pinned" ? "accept" : "crash";
    out[name] = [verdict, said.slice(0, 400)];
  } catch (error) {
    out[name] = ["crash", `threw: ${error?.stack ?? error}`];
  }
}
process.stdout.write(JSON.stringify(out));
"""


def js_verdicts(paths: dict[str, Path], keys_body: dict[str, Any], folder: Path) -> dict[str, Verdict]:
    cases_file, keys_file = folder / "cases.json", folder / "keys.json"
    cases_file.write_text(json.dumps({name: str(path) for name, path in paths.items()}))
    keys_file.write_text(json.dumps(keys_body))
    audit = ROOT / "clients" / "js" / "src" / "audit.js"
    done = subprocess.run(["node", "--input-type=module", "-e", JS_RUNNER, str(audit), str(cases_file), str(keys_file)],
                          capture_output=True, text=True, timeout=600, check=True)
    return {name: (verdict, said) for name, (verdict, said) in json.loads(done.stdout).items()}


PANEL_STATES = {"pass": ACCEPT, "legacy": LEGACY, "fail": REFUSE}


def panel_verdicts(page: Any, game_url: str, paths: dict[str, Path]) -> dict[str, Verdict]:
    """Every file loaded into the audit panel of one finished game's page, in turn."""
    page.goto(game_url)
    page.wait_for_selector("#audit-file", state="attached", timeout=20000)
    out: dict[str, Verdict] = {}
    for index, (name, path) in enumerate(paths.items()):
        file_name = f"case-{index:03d}.json"
        page.set_input_files("#audit-file", {"name": file_name, "mimeType": "application/json", "buffer": path.read_bytes()})
        try:
            page.wait_for_function(f"document.querySelector('#audit-result')?.innerText.includes('{file_name}')",
                                   timeout=60000)
        except Exception as exc:  # a page that never answers is the panel's crash, recorded, not raised
            out[name] = (CRASH, f"no verdict: {exc}")
            continue
        state = page.get_attribute("#audit", "data-audit-result") or ""
        out[name] = (PANEL_STATES.get(state, CRASH), page.inner_text("#audit-result"))
    return out
