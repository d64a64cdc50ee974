// The datasets a job run read. $rows: [{job, run, urn}]
UNWIND $rows AS row
MATCH (r:JobRun {run: row.run, job: row.job})
MATCH (d:Dataset {urn: row.urn})
MERGE (r)-[:Read]->(d)
