// One hop downstream from a frontier of fields over all time, as upstream_step_ever.
UNWIND $frontier AS urn
MATCH (u:DatasetField {urn: urn})<-[e:DataDerivedFrom|PreviouslyDerivedFrom]-(f:DatasetField)
RETURN urn AS from, f.urn AS urn, f.datasetUrn AS datasetUrn, f.fieldPath AS fieldPath,
       f.placeholder AS placeholder, f.removed AS removed, f.ambiguous AS ambiguous, properties(e) AS edge
