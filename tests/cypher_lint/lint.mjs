// Lint Cypher statements with Neo4j's linter (lintCypherQuery from @neo4j-cypher/language-support).
// stdin: JSON [{"name": str, "query": str, "parameters": {name: sample value}}]
// stdout: JSON [{"name": str, "diagnostics": [{"severity": 1 error | 2 warning, "message": str, "offsets": {...}}]}]
import { lintCypherQuery } from '@neo4j-cypher/language-support';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const items = JSON.parse(input);
const out = items.map(({ name, query, parameters }) => {
  const { diagnostics } = lintCypherQuery(query, { parameters: parameters ?? {} });
  return {
    name,
    diagnostics: diagnostics.map((d) => ({ severity: d.severity, message: d.message, offsets: d.offsets })),
  };
});
process.stdout.write(JSON.stringify(out));
