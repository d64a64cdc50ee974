"""fieldgraph.ingest."""
