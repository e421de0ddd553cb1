// A complete Cirulla engine in Java for the text engine protocol (docs/text-protocol.md).
// The JDK only, no libraries; run from source with Java 11+'s single-file launcher:
//
// Play:  cirulla bot text -- java examples/TextEngine.java
// Check: cirulla bot check 'text:java examples/TextEngine.java'
//
// It plays like text_engine.js: among the numbered legal actions of each genmove, a
// declaration, else the capture worth most (settebello, coins, sevens, then the number
// of cards), else it drops the lowest card. Card notation: rank A 2..7 J Q K (J=8, Q=9,
// K=10), suit D H C S. The JVM reserves far more address space than it uses (a quarter
// of the machine's memory for its heap): it runs under the sandbox's memory limit,
// which counts what it uses.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class TextEngine {
    static final List<String> COMMANDS = List.of(
        "protocol_version", "name", "version", "known_command", "list_commands", "quit",
        "rules", "newgame", "event", "hand", "state", "genmove");
    static final Pattern LINE = Pattern.compile("^(\\d+)?\\s*(\\S+)\\s*(.*)$");

    static int value(String card) {
        switch (card.charAt(0)) {
            case 'A': return 1;
            case 'J': return 8;
            case 'Q': return 9;
            case 'K': return 10;
            default: return card.charAt(0) - '0';
        }
    }

    static int worth(String action) {
        String[] parts = action.split(" ");
        if (parts.length == 2) return 1000; // a declaration: free points
        String play = parts[parts.length - 1];
        int colon = play.indexOf(':');
        if (colon < 0) return -value(play); // drop the lowest card
        String[] taken = (play.substring(0, colon) + "+" + play.substring(colon + 1)).split("\\+");
        int score = 100 + taken.length;
        for (String card : taken) {
            if (card.equals("7D")) score += 50; // the settebello
            if (card.endsWith("D")) score += 3; // coins
            if (card.charAt(0) == '7') score += 2; // primiera
        }
        return score;
    }

    static String genmove(String args) {
        int space = args.indexOf(' ');
        if (space < 0) throw new IllegalArgumentException("genmove needs milliseconds and the legal actions");
        String[] legal = args.substring(space + 1).split(";");
        int best = 0;
        for (int i = 1; i < legal.length; i++) {
            if (worth(legal[i]) > worth(legal[best])) best = i;
        }
        return Integer.toString(best);
    }

    static String handle(String command, String args) {
        switch (command) {
            case "protocol_version": return "1";
            case "name": return "java-example";
            case "version": return "1.0";
            case "known_command": return COMMANDS.contains(args.trim()) ? "true" : "false";
            case "list_commands": return String.join("\n", COMMANDS);
            case "quit": case "rules": case "newgame": case "event": case "hand": case "state":
                return "";
            case "genmove": return genmove(args);
            default: throw new IllegalArgumentException("unknown command");
        }
    }

    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String raw;
        while ((raw = in.readLine()) != null) {
            int hash = raw.indexOf('#');
            String line = (hash >= 0 ? raw.substring(0, hash) : raw).trim();
            if (line.isEmpty()) continue;
            Matcher m = LINE.matcher(line);
            if (!m.matches()) continue;
            String id = m.group(1) == null ? "" : m.group(1);
            String command = m.group(2);
            String reply;
            try {
                String text = handle(command, m.group(3));
                reply = "=" + id + (text.isEmpty() ? "" : " " + text);
            } catch (IllegalArgumentException err) {
                reply = "?" + id + " " + err.getMessage();
            }
            out.print(reply + "\n\n");
            out.flush();
            if (command.equals("quit")) return;
        }
    }
}
