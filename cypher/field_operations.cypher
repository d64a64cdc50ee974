// Stored field operations by checksum. $checksums: [checksum]
MATCH (o:FieldOperations)
WHERE o.checksum IN $checksums
RETURN o.checksum AS checksum, o.operations AS operations
