"""``python -m fieldgraph.ingest.cli``: the ``fieldgraph`` command."""

import sys

from fieldgraph.ingest.cli import main

sys.exit(main())
