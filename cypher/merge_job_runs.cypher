// Job runs with their field operations (CDAP): each run once per (job, run), its operations stored once per
// checksum and shared by every run that ran the same ones.
// $rows: [{job, run, time, checksum, operations}]
UNWIND $rows AS row
MERGE (o:FieldOperations {checksum: row.checksum})
ON CREATE SET o.operations = row.operations
MERGE (r:JobRun {run: row.run, job: row.job})
SET r.time = row.time, r.checksum = row.checksum
MERGE (r)-[:RanOperations]->(o)
