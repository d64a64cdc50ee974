// Neo4j: take the graph's writer lock. Run in a transaction held open while one writer reads, plans and writes
// a batch, then rolled back: a concurrent MERGE of the same name waits on the unique constraint until then.
MERGE (w:WriterLock {name: $name})
