// Source fields a job drops (a CDAP transform with no outputs): one entry per job and operation. $rows: [{urn, entry}]
UNWIND $rows AS row
MATCH (f:DatasetField {urn: row.urn})
SET f.droppedBy = CASE WHEN row.entry IN coalesce(f.droppedBy, []) THEN f.droppedBy
                       ELSE coalesce(f.droppedBy, []) + row.entry END
