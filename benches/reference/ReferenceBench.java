// The reference side of `cargo bench --bench reference`: arnsholt/dgtdriver's DgtDriver and
// MoveParser (https://github.com/arnsholt/dgtdriver, AGPL-3.0; not part of this project, compiled
// from a checkout the bench is given) run over the real captures' original recordings, in memory,
// as its own test reads them. Only this driver is ours.
//
// Arguments: the `.inbytes` files (one base64 board message per line). Then, on standard input,
// one number per line: run that many iterations (each: every recording through a fresh driver
// and parser) and print one line with each iteration's nanoseconds, then the moves found. The
// JVM stays up between requests, so that it is warmed as the bench measures it.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.riisholt.dgtdriver.DgtDriver;
import org.riisholt.dgtdriver.moveparser.Game;
import org.riisholt.dgtdriver.moveparser.MoveParser;

public class ReferenceBench {
    public static void main(String[] args) throws Exception {
        List<List<byte[]>> recordings = new ArrayList<>();
        for (String path : args) {
            List<byte[]> messages = new ArrayList<>();
            for (String line : Files.readAllLines(Paths.get(path))) {
                if (!line.isEmpty()) {
                    messages.add(Base64.getDecoder().decode(line));
                }
            }
            recordings.add(messages);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String request;
        while ((request = in.readLine()) != null) {
            int n = Integer.parseInt(request.trim());
            StringBuilder out = new StringBuilder();
            int moves = 0;
            for (int i = 0; i < n; i++) {
                long start = System.nanoTime();
                moves = once(recordings);
                out.append(System.nanoTime() - start).append(' ');
            }
            out.append("moves ").append(moves);
            System.out.println(out);
            System.out.flush();
        }
    }

    static int once(List<List<byte[]>> recordings) {
        int moves = 0;
        for (List<byte[]> messages : recordings) {
            List<Game> games = new ArrayList<>();
            MoveParser parser = new MoveParser(games::add);
            DgtDriver driver = new DgtDriver(parser::gotMessage, null);
            for (byte[] message : messages) {
                driver.gotBytes(message);
            }
            parser.endGame();
            for (Game game : games) {
                moves += game.moves.size();
            }
        }
        return moves;
    }
}
