"""`inasim trace-sources`: every trace source of INA-Sim's objects, with the
Config path that reaches each instance in a run (test_fabric's
FabricTest.TraceSourcesAreReachableThroughTheirConfigPaths connects through
the device path it prints)."""

import json
import os
import subprocess

from helpers import SOURCE_DIR, child_env

BIN = os.environ.get("INASIM_BIN", str(SOURCE_DIR / "build" / "inasim"))


def run(*args):
    return subprocess.run([BIN, "trace-sources", *args], capture_output=True, text=True, env=child_env(), timeout=60)


def test_lists_devices_and_every_protocol_agent_with_its_path():
    p = run("--json")
    assert p.returncode == 0, p.stderr
    rows = {(r["type"], r["source"]): r for r in json.loads(p.stdout)}
    for source in ("Drop", "Mark", "Pfc", "TxStart"):
        assert rows[("inasim::InaNetDevice", source)]["path"] == f"/NodeList/*/DeviceList/*/$inasim::InaNetDevice/{source}"
    for agent, source in (("inasim::SwitchMLWorker", "Tx"), ("inasim::SwitchMLWorker", "Rx"),
                          ("inasim::PanamaWorker", "Window"), ("inasim::CanaryHost", "Reissue"),
                          ("inasim::P4SGDWorker", "Tx"), ("inasim::P4SGDWorker", "Rx")):
        r = rows[(agent, source)]
        assert r["path"] == f"/NodeList/*/ApplicationList/*/${agent}/{source}"
        assert r["help"] and r["callback"]
    text = run()
    assert text.returncode == 0 and "/NodeList/*/DeviceList/*/$inasim::InaNetDevice/TxStart" in text.stdout


def test_bad_arguments_exit_2():
    for args in (["--yaml"], ["--json", "x"]):
        p = run(*args)
        assert p.returncode == 2 and "trace-sources" in p.stderr, p.stderr
    assert run("--help").returncode == 0
