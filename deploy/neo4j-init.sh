#!/bin/sh
# One-shot: apply fieldgraph's Neo4j constraints and indexes (cypher/schema_neo4j.cypher) once Neo4j answers.
# Runs in the neo4j image (it has cypher-shell); NEO4J_AUTH is "user/password".
set -eu
user="${NEO4J_AUTH%%/*}"
password="${NEO4J_AUTH#*/}"
until cypher-shell -a "${NEO4J_URI:-bolt://neo4j:7687}" -u "$user" -p "$password" "RETURN 1" >/dev/null 2>&1; do
  echo "waiting for Neo4j..."
  sleep 2
done
cypher-shell -a "${NEO4J_URI:-bolt://neo4j:7687}" -u "$user" -p "$password" -f /fieldgraph/schema_neo4j.cypher
echo "fieldgraph constraints and indexes applied"
