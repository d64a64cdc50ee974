// Job lineage (CDAP program runs, OpenLineage runs): additive edges per (field pair, job), with the first
// and last time a run saw them (validFrom: the first); the newest run's properties win.
// $rows: [{down, up, source, firstSeen, lastSeen, props}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})
MATCH (u:DatasetField {urn: row.up})
MERGE (d)-[e:DataDerivedFrom {source: row.source}]->(u)
WITH e, row, e.lastSeen IS NULL OR row.lastSeen >= e.lastSeen AS newer
SET e.firstSeen = CASE WHEN e.firstSeen IS NULL OR row.firstSeen < e.firstSeen THEN row.firstSeen ELSE e.firstSeen END,
    e.lastSeen = CASE WHEN newer THEN row.lastSeen ELSE e.lastSeen END
SET e += CASE WHEN newer THEN row.props ELSE {} END
SET e.validFrom = e.firstSeen
