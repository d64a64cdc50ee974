// Whether the server answers (and, run in a writer's lock transaction, whether that transaction is still open)
RETURN 1 AS ok
