// Neo4j: take the writer locks of a batch's keys (datasets, queries, jobs it reads and writes), in the order of
// $names (sorted). Run in a transaction held open while one writer reads, plans and writes a batch, then rolled
// back: a concurrent MERGE of one of the names waits on the unique constraint until then. $names: [key]
UNWIND $names AS name
MERGE (w:WriterLock {name: name})
