// The job runs within [$start, $end) that wrote ($wrote true) or read a dataset, with their operations'
// checksum and the deletes of job lineage of every dataset they wrote (a run before a delete no longer counts
// for that dataset). $start, $end: ms, null for open.
MATCH (d:Dataset {urn: $dataset})<-[rel:Wrote|Read]-(r:JobRun)
WHERE (type(rel) = 'Wrote') = $wrote
  AND ($start IS NULL OR r.time >= $start) AND ($end IS NULL OR r.time < $end)
MATCH (r)-[:Wrote]->(w:Dataset)
RETURN r.job AS job, r.run AS run, r.time AS time, r.checksum AS checksum,
       collect([w.urn, coalesce(w.jobLineageDeletes, [])]) AS wrote
