// Fields derived from whole datasets as of $asOf (ms since the epoch), for impact analysis.
UNWIND $frontier AS urn
MATCH (u:Dataset {urn: urn})<-[e:DataDerivedFrom|PreviouslyDerivedFrom]-(f:DatasetField)
WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
RETURN urn AS from, f.urn AS urn, f.datasetUrn AS datasetUrn, f.fieldPath AS fieldPath,
       f.placeholder AS placeholder, f.removed AS removed, f.ambiguous AS ambiguous, properties(e) AS edge
