// The lineage edges into and out of dataset $urn's fields that held at $asOf (ms since the epoch), for
// `fieldgraph diff-lineage`: direction `in` (the dataset's field derives from `up`) or `out`.
MATCH (:Dataset {urn: $urn})-[:HasField]->(f:DatasetField)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u)
WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
RETURN 'in' AS direction, f.urn AS down, u.urn AS up, e.source AS source, e.transformation AS transformation,
       e.kind AS kind
UNION ALL
MATCH (:Dataset {urn: $urn})-[:HasField]->(f:DatasetField)<-[e:DataDerivedFrom|PreviouslyDerivedFrom]-(x:DatasetField)
WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
RETURN 'out' AS direction, x.urn AS down, f.urn AS up, e.source AS source, e.transformation AS transformation,
       e.kind AS kind
