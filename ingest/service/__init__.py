"""``fieldgraph serve``: the HTTP service (:mod:`.app`), what guards it (:mod:`.guard`: token, size and rate
limits, metrics), its one graph writer (:mod:`.writer`) and the lineage explorer page (``explorer/``)."""

from .app import create_app

__all__ = ["create_app"]
