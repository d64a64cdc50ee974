// What job runs said before (their operations, the datasets they read and wrote), to be said again: a run sent
// again replaces it. $rows: [{job, run}]
UNWIND $rows AS row
MATCH (r:JobRun {run: row.run, job: row.job})-[e:RanOperations|Read|Wrote]->()
DELETE e
