// Indexes for the embedded FalkorDB store (unique constraints are added with GRAPH.CONSTRAINT).
CREATE INDEX FOR (d:Dataset) ON (d.urn);
CREATE INDEX FOR (d:Dataset) ON (d.placeholder);
CREATE INDEX FOR (f:DatasetField) ON (f.urn);
CREATE INDEX FOR (f:DatasetField) ON (f.placeholder);
CREATE INDEX FOR (r:JobRun) ON (r.run);
CREATE INDEX FOR (o:FieldOperations) ON (o.checksum);
CREATE INDEX FOR (q:Query) ON (q.urn);
CREATE INDEX FOR (j:DataJob) ON (j.urn);
