// Delete the whole graph in Neo4j, in batches (an auto-commit statement).
MATCH (n)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 1000 ROWS
