// Whether the graph holds any rename (walks then look for renames at each step).
MATCH ()-[r:RenamedFrom]->()
RETURN 1 AS found
LIMIT 1
