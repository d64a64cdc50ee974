// Apache Avro's own reader/writer compatibility verdicts (SchemaCompatibility), for tests/test_avro_java.py.
// Standard input: pairs of lines, a reader schema then a writer schema (each Avro JSON on one line). Standard
// output: a line per pair, COMPATIBLE, or INCOMPATIBLE followed by the kinds of incompatibility (space-separated),
// or ERROR and the message when a schema does not parse. Run as a single source file: java -cp AVRO_CLASSPATH
// AvroVerdicts.java
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.TreeSet;

import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;

public class AvroVerdicts {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String reader;
        while ((reader = in.readLine()) != null) {
            String writer = in.readLine();
            try {
                Schema r = new Schema.Parser().parse(reader);
                Schema w = new Schema.Parser().parse(writer);
                SchemaCompatibility.SchemaPairCompatibility pair =
                    SchemaCompatibility.checkReaderWriterCompatibility(r, w);
                SchemaCompatibility.SchemaCompatibilityResult result = pair.getResult();
                if (result.getCompatibility() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
                    out.append("COMPATIBLE");
                } else {
                    TreeSet<String> kinds = new TreeSet<>();
                    for (SchemaCompatibility.Incompatibility i : result.getIncompatibilities()) {
                        kinds.add(i.getType().name());
                    }
                    out.append("INCOMPATIBLE ").append(String.join(" ", kinds));
                }
            } catch (Exception e) {
                out.append("ERROR ").append(String.valueOf(e.getMessage()).replace('\n', ' '));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
