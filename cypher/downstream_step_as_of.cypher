// One hop downstream from a frontier of fields as of $asOf (ms since the epoch), as upstream_step_as_of.
UNWIND $frontier AS urn
MATCH (u:DatasetField {urn: urn})<-[e:DataDerivedFrom|PreviouslyDerivedFrom]-(f:DatasetField)
WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
RETURN urn AS from, f.urn AS urn, f.datasetUrn AS datasetUrn, f.fieldPath AS fieldPath,
       f.placeholder AS placeholder, f.removed AS removed, f.ambiguous AS ambiguous, properties(e) AS edge
