// How many renames the graph holds (walks look for renames at each step only when there are any). A count, which
// both stores answer from their counts (FalkorDB scans every node for `... RETURN 1 LIMIT 1` of a type it has none of).
MATCH ()-[r:RenamedFrom]->()
RETURN count(r) AS renames
