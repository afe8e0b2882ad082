"""The console's live view under 1,000 calls/s for 30 s: no growing lag, bounded memory in its process.

Real parts: an embedded nats-server, ``toolmesh console`` as its own process, and
headless Chromium (Debian's package, through Playwright) on the live page. The
load is the events of 1,000 calls/s published on the mesh's event subjects exactly
as nodes publish them (a ``started`` and a ``finished``/``failed`` per call, over
50 tools and 4 node names), so the figures are the console's and not a node's.
Every second it records the browser's lag behind the newest batch, the rows the
page received, and the console process's resident memory.

    python bench/console_live.py [--rate 1000] [--seconds 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import nats
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh.contracts import Subjects, encode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.plugins.console.call_events import call_events
from tests.processes import free_port


def rss_mib(pid: int) -> float:
    """Resident memory of a process, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def publish_load(url: str, prefix: str, rate: int, seconds: float, sent: list[int]) -> None:
    """Publish the events of ``rate`` calls per second for ``seconds``, in 10 ms slices."""
    subjects = Subjects(prefix)
    nc = await nats.connect(url)
    tools = [f"tool_{index:02d}" for index in range(50)]
    nodes = [f"node-{index}" for index in range(4)]
    started = time.monotonic()
    count = 0
    while (elapsed := time.monotonic() - started) < seconds:
        due = int(elapsed * rate) - count
        for _ in range(max(0, due)):
            tool = random.choice(tools)
            node = random.choice(nodes)
            failed = random.random() < 0.02
            for event in call_events(
                tool,
                f"r{count}",
                node,
                timestamp=time.time(),
                duration_ms=random.lognormvariate(0.5, 0.6),
                failed=failed,
                ended_attributes={"cached": True} if random.random() < 0.1 else None,
            ):
                await nc.publish(subjects.event(event.kind, tool), encode(event))
            count += 1
        sent.append(count)
        await nc.flush()
        await anyio.sleep(0.01)
    await nc.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("needs Debian's chromium: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    prefix = "benchlive"
    port = free_port()
    with EmbeddedBroker(0) as broker:
        console = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolmesh",
                "console",
                "--nats",
                broker.url,
                "--prefix",
                prefix,
                "--port",
                str(port),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "TOOLMESH_CONSOLE_TOKEN": ""},
        )
        assert console.stdout is not None
        console.stdout.readline()  # "toolmesh console on ..."
        samples: list[dict[str, Any]] = []
        sent: list[int] = [0]
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium)
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/live")
                page.wait_for_selector("#live-state.good")
                idle_rss = rss_mib(console.pid)
                load = threading.Thread(
                    target=anyio.run,
                    args=(publish_load, broker.url, prefix, options.rate, options.seconds, sent),
                )
                load.start()
                started = time.monotonic()
                while load.is_alive() or time.monotonic() - started < options.seconds + 2:
                    time.sleep(1.0)
                    seen = page.evaluate(
                        "() => [window.consoleLag ?? 0, window.consoleRowsSeen ?? 0,"
                        " window.consoleCallLag ?? 0]"
                    )
                    samples.append(
                        {
                            "t": round(time.monotonic() - started),
                            "sent": sent[-1],
                            "lag_s": seen[0],
                            "rows_seen": seen[1],
                            "call_lag_s": seen[2],
                            "rss_mib": rss_mib(console.pid),
                        }
                    )
                    if not load.is_alive() and time.monotonic() - started > options.seconds + 2:
                        break
                load.join()
                summary_rows = page.locator("#live-summary tbody tr").count()
                browser.close()
        finally:
            console.terminate()
            console.wait(timeout=10)
    loaded = [sample for sample in samples if 0 < sample["t"] <= options.seconds]
    first, last = loaded[: len(loaded) // 3], loaded[-(len(loaded) // 3) :]
    result = {
        "rate": options.rate,
        "seconds": options.seconds,
        "calls_sent": sent[-1],
        "rows_delivered_to_page": samples[-1]["rows_seen"],
        "summary_rows": summary_rows,
        "lag_s_first_third_median": statistics.median(s["lag_s"] for s in first),
        "lag_s_last_third_median": statistics.median(s["lag_s"] for s in last),
        "lag_s_max": max(s["lag_s"] for s in loaded),
        "call_lag_s_first_third_median": statistics.median(s["call_lag_s"] for s in first),
        "call_lag_s_last_third_median": statistics.median(s["call_lag_s"] for s in last),
        "call_lag_s_max": max(s["call_lag_s"] for s in loaded),
        "rss_mib_idle": idle_rss,
        "rss_mib_first_third_max": max(s["rss_mib"] for s in first),
        "rss_mib_last_third_max": max(s["rss_mib"] for s in last),
        "samples": samples,
    }
    if options.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{'t s':>4} {'calls sent':>10} {'rows on page':>12} {'batch lag s':>11} {'call lag s':>10}"
        f" {'console RSS MiB':>16}"
    )
    for sample in samples:
        print(
            f"{sample['t']:4} {sample['sent']:10} {sample['rows_seen']:12} {sample['lag_s']:11.3f}"
            f" {sample['call_lag_s']:10.3f} {sample['rss_mib']:16.1f}"
        )
    print(
        f"sent {result['calls_sent']} calls in {options.seconds:g} s; the page received"
        f" {result['rows_delivered_to_page']} rows"
    )
    print(
        f"call lag (call ended -> row on the page), median: first third"
        f" {result['call_lag_s_first_third_median']:.3f} s,"
        f" last third {result['call_lag_s_last_third_median']:.3f} s;"
        f" max {result['call_lag_s_max']:.3f} s"
    )
    print(
        f"batch lag (batch sent -> drawn), median: first third {result['lag_s_first_third_median']:.3f} s,"
        f" last third {result['lag_s_last_third_median']:.3f} s (ratio"
        f" {result['lag_s_last_third_median'] / max(result['lag_s_first_third_median'], 1e-9):.2f});"
        f" max {result['lag_s_max']:.3f} s"
    )
    print(
        f"console RSS: idle {idle_rss:.1f} MiB, first third max {result['rss_mib_first_third_max']:.1f} MiB,"
        f" last third max {result['rss_mib_last_third_max']:.1f} MiB"
    )


if __name__ == "__main__":
    main()
