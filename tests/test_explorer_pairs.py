"""The lineage explorer draws one edge per pair of fields, however many jobs wrote it (issue 47, point 3; a real
browser on a real ``fieldgraph serve``, as in ``tests/test_explorer.py``): two Spark jobs writing gold.users from
users are one edge per column, labelled with the transformation once and ``2 sources``, and the side panel lists
each job's edge. Screenshot: ``test-artifacts/explorer-pairs.png``."""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest

from fieldgraph.graph.plan import field_urn

from .test_explorer import ARTIFACTS, api, edges, explorer, serve
from .test_openlineage import GOLD, USERS
from .test_pair_hops import BACKFILL, DAILY, two_jobs

pytestmark = pytest.mark.integration
__all__ = ["explorer", "serve"]  # the fixtures this module uses from test_explorer

GOLD_ID, USERS_ID, USERS_COUNTRY = field_urn(GOLD, "id"), field_urn(USERS, "id"), field_urn(USERS, "country")


def test_explorer_draws_one_edge_per_pair_listing_both_jobs(graph: Any, serve: str, explorer: Any) -> None:
    two_jobs(graph)
    base = serve
    hops = api(base, "lineage/upstream", field=GOLD_ID, depth=1)["hops"]
    assert sorted((h["urn"], tuple(e["source"] for e in h["edges"])) for h in hops) == \
        [(USERS_COUNTRY, (BACKFILL, DAILY)), (USERS_ID, (BACKFILL, DAILY))]

    assert explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(GOLD_ID)}")["error"] is None
    view = explorer("click", node=GOLD_ID)
    drawn = [e for e in view["edges"] if e["kind"] == "lineage"]
    assert edges(view) == {(USERS_ID, GOLD_ID), (USERS_COUNTRY, GOLD_ID)} and len(drawn) == 2  # one per pair
    label = {(e["source"], e["target"]): e["label"].split("\n") for e in drawn}
    assert label[USERS_ID, GOLD_ID] == ["DIRECT IDENTITY", "2 sources"]
    assert label[USERS_COUNTRY, GOLD_ID][-1] == "2 sources"
    explorer("screenshot", path=str(ARTIFACTS / "explorer-pairs.png"))
    # the side panel: a card per job's edge, each naming its job
    cards = explorer("items", testid="edge-card")
    assert len(cards) == 4
    assert sorted(t for c in cards for t in (BACKFILL, DAILY) if t in c["text"]) == [BACKFILL] * 2 + [DAILY] * 2
    assert explorer("errors") == []
