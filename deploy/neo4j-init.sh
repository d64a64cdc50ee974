#!/bin/sh
# One-shot: apply fieldgraph's Neo4j constraints and indexes (cypher/schema_neo4j.cypher) once Neo4j answers.
# Runs in the neo4j image (it has cypher-shell), with the image's entrypoint replaced; NEO4J_AUTH is "user/password".
set -eu
uri="${NEO4J_URI:-bolt://neo4j:7687}"
user="${NEO4J_AUTH%%/*}"
password="${NEO4J_AUTH#*/}"
tries=0
until cypher-shell -a "$uri" -u "$user" -p "$password" "RETURN 1" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "Neo4j at $uri did not answer (or refused $user's password) for 2 minutes" >&2
    exit 1
  fi
  echo "waiting for Neo4j..."
  sleep 2
done
cypher-shell -a "$uri" -u "$user" -p "$password" -f /fieldgraph/schema_neo4j.cypher
echo "fieldgraph constraints and indexes applied"
