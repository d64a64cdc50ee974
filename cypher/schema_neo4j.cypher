// Constraints and indexes for Neo4j.
CREATE CONSTRAINT dataset_urn IF NOT EXISTS FOR (d:Dataset) REQUIRE d.urn IS UNIQUE;
CREATE CONSTRAINT dataset_field_urn IF NOT EXISTS FOR (f:DatasetField) REQUIRE f.urn IS UNIQUE;
CREATE INDEX dataset_placeholder IF NOT EXISTS FOR (d:Dataset) ON (d.placeholder);
CREATE INDEX dataset_field_placeholder IF NOT EXISTS FOR (f:DatasetField) ON (f.placeholder);
CREATE CONSTRAINT field_operations_checksum IF NOT EXISTS FOR (o:FieldOperations) REQUIRE o.checksum IS UNIQUE;
CREATE CONSTRAINT job_run_key IF NOT EXISTS FOR (r:JobRun) REQUIRE (r.run, r.job) IS UNIQUE;
CREATE CONSTRAINT query_urn IF NOT EXISTS FOR (q:Query) REQUIRE q.urn IS UNIQUE;
CREATE CONSTRAINT writer_lock_name IF NOT EXISTS FOR (w:WriterLock) REQUIRE w.name IS UNIQUE;
CREATE CONSTRAINT data_job_urn IF NOT EXISTS FOR (j:DataJob) REQUIRE j.urn IS UNIQUE;
