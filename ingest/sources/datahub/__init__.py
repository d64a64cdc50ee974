"""The DataHub source, split as the OpenLineage client splits its own: the wire models (:mod:`.models`), reading
JSON into them (:mod:`.serde`), platform schemas as fields (:mod:`.schemas`), the models as typed changes
(:mod:`.mapping`), and one event through all of them (:mod:`.events`).

**Adding an aspect** means its model in ``models.py`` (and in ``ASPECT_MODELS`` if it is a dataset's), its change
in ``mapping.py``, and its route in ``events.py`` (and ``serde.SNAPSHOT_ASPECTS`` if snapshots carry it).
"""

from .events import decode_datahub_event, is_datahub_event

__all__ = ["decode_datahub_event", "is_datahub_event"]
