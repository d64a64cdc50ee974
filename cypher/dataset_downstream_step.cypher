// Fields derived from whole datasets (fineGrainedLineages with upstreamType DATASET), for impact analysis.
UNWIND $frontier AS urn
MATCH (u:Dataset {urn: urn})<-[e:DataDerivedFrom]-(f:DatasetField)
RETURN urn AS from, f.urn AS urn, f.datasetUrn AS datasetUrn, f.fieldPath AS fieldPath,
       f.placeholder AS placeholder, f.removed AS removed, f.ambiguous AS ambiguous, properties(e) AS edge
