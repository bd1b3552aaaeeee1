"""A live scenario that runs alone first lets the binding cycles of earlier scenarios' pods end: kube-scheduler
v1.36.2 counted an earlier scenario's PreBind wait (ended seconds after its pod was deleted) in the next scenario's
`scheduler_dra_bindingconditions_allocations_total`, which that scenario expected to stay 0."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from draconform.live.config import LiveOptions
from draconform.live.metrics import wait_for_idle_schedulers
from tests.live.helpers import metrics_server


@pytest.fixture
def scheduler() -> Iterator[tuple[str, list[int]]]:
    """A /metrics endpoint whose binding-cycle gauge reads 2, 1, then 0 from then on; the list records the
    gauge values served."""
    served: list[int] = []

    def page() -> str:
        running = max(0, 2 - len(served))
        served.append(running)
        return (f'scheduler_goroutines{{operation="binding"}} {running}\n'
                'scheduler_goroutines{operation="Filter"} 3\n')

    server = metrics_server(page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/metrics", served
    server.shutdown()
    server.server_close()


def test_a_scenario_running_alone_waits_until_no_binding_cycle_runs(scheduler: tuple[str, list[int]],
                                                                    tmp_path: Path) -> None:
    url, served = scheduler
    timeouts = tmp_path / "timeouts.yaml"
    timeouts.write_text(yaml.safe_dump({"pollInterval": "1ms", "cleanupTimeout": "5m"}))
    wait_for_idle_schedulers(LiveOptions("kubeconfig", timeout_config=str(timeouts), metrics_url=url))
    assert served == [2, 1, 0]  # other operations' goroutines do not count


def test_a_scheduler_whose_metrics_cannot_be_read_is_not_waited_for(tmp_path: Path) -> None:
    wait_for_idle_schedulers(LiveOptions("kubeconfig", metrics_url="http://127.0.0.1:1/metrics"))
