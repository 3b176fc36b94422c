package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.ruleset.RuleCompiler;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code replay --html} and {@code plan --html}: the page's SVG parsed as XML and checked against
 * the plans it draws, then opened in headless Chromium (Debian's {@code chromium}) as a person
 * would: a screenshot, and the laid-out DOM with every label's real box inside the picture and
 * clear of the others. The Chromium part is skipped, with the reason, where none is installed.
 *
 * <p>{@code -Devictd.timeline.out=DIR} keeps the screenshots in DIR (the README's picture is one).
 */
class TimelineHtmlTest {
  static final String SOFT = "fixtures/memory/soft-memory-pressure.yaml";
  static final String RATE_GUARD =
      "fixtures/examples/eviction-rate-guard/soft-thresholds-count-only-evictions.yaml";
  static final String SCALE = "fixtures/scale/memory-5000-pods.yaml";
  static final String MIN_RECLAIM = "fixtures/memory/min-reclaim.yaml";
  static final String DISK_RECLAIM = "fixtures/disk/node-reclaim-imagefs-split.yaml";
  static final String EVIL_NAME = "<script>alert(1)</script>\"x";
  static final String EVIL_NAMESPACE = "ns&'";

  static final String EVIL_FIXTURE =
      "name: \"evil <script>alert(2)</script> \\\"quoted\\\"\"\n"
          + "kubeletConfig: {evictionHard: {memory.available: 1Gi}}\n"
          + "pods:\n"
          + "  - metadata: {name: '<script>alert(1)</script>\"x', namespace: \"ns&'\", uid: u1}\n"
          + "steps:\n"
          + "  - summary:\n"
          + "      node: {memory: {availableBytes: 500Mi, workingSetBytes: 4Gi}}\n"
          + "      pods: [{podRef: {name: '<script>alert(1)</script>\"x', namespace: \"ns&'\","
          + " uid: u1}, memory: {workingSetBytes: 1Gi}}]\n";

  /** What the fixture's plans say the picture must show. */
  static List<EvictionPlan> plans(String file) {
    Fixture f = FixtureLoader.load(Path.of(file));
    RuleSet rs =
        f.rules() == null ? RuleCompiler.compileDefault() : RuleCompiler.compile(f.rules());
    return new FixtureRunner(p -> rs).run(f).plans();
  }

  static String render(Path dir, String fixture, String... extra) throws IOException {
    Path html = dir.resolve("timeline.html");
    List<String> args = new ArrayList<>(List.of("replay", "--html", html.toString()));
    args.addAll(List.of(extra));
    args.add(fixture);
    CliTest.Run r = CliTest.run(args.toArray(String[]::new));
    assertThat(r.code()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).contains("written to " + html);
    return Files.readString(html);
  }

  @ParameterizedTest
  @ValueSource(strings = {SOFT, RATE_GUARD, SCALE, MIN_RECLAIM, DISK_RECLAIM})
  void theSvgDrawsEveryLaneThresholdConditionAndEviction(String fixture, @TempDir Path dir)
      throws Exception {
    String page = render(dir, fixture);
    List<EvictionPlan> plans = plans(fixture);
    assertThat(page)
        .as("self-contained: no fetch, no script")
        .doesNotContain("<script", "src=", "href=", "@import", "url(");
    Document svg = svg(page);
    Element root = svg.getDocumentElement();
    double[] vb = viewBox(root);

    Set<String> signals = new HashSet<>();
    plans.forEach(p -> p.observations().forEach(o -> signals.add(o.signal().key())));
    assertThat(attrs(svg, "g", "lane signal", "data-signal"))
        .containsExactlyInAnyOrderElementsOf(signals);

    Set<String> thresholds = new HashSet<>();
    Set<String> soft = new HashSet<>();
    for (EvictionPlan p : plans) {
      for (EvictionPlan.ThresholdStatus s : p.thresholds()) {
        if (s.quantity() != null && signals.contains(s.threshold().signal().key())) {
          thresholds.add(s.threshold().id());
          if (!s.threshold().isHard() && s.met()) {
            soft.add(s.threshold().id());
          }
        }
      }
    }
    assertThat(new HashSet<>(attrs(svg, "path", "threshold", "data-threshold")))
        .isEqualTo(thresholds);
    assertThat(new HashSet<>(attrs(svg, "rect", "grace", "data-threshold"))).isEqualTo(soft);
    Set<String> minReclaim = new HashSet<>();
    int reclaims = 0;
    for (EvictionPlan p : plans) {
      for (EvictionPlan.ThresholdStatus s : p.thresholds()) {
        if (s.threshold().minReclaim() != null && (s.met() || s.unresolved())) {
          minReclaim.add(s.threshold().id());
        }
      }
      reclaims += !p.failed() && !p.reclaimed().isEmpty() ? 1 : 0;
    }
    assertThat(new HashSet<>(attrs(svg, "path", "min-reclaim", "data-threshold")))
        .isEqualTo(minReclaim);
    assertThat(elements(svg, "rect", "reclaim")).hasSize(reclaims);

    List<String> acted = new ArrayList<>();
    List<String> evicted = new ArrayList<>();
    List<String> conditions = new ArrayList<>();
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan p = plans.get(i);
      if (p.signal() != null) {
        acted.add(String.valueOf(i + 1));
      }
      for (EvictionDecision d : p.decisions()) {
        evicted.add((i + 1) + " " + d.pod().key());
      }
      p.conditions().forEach(c -> conditions.add(c.name()));
    }
    assertThat(attrs(svg, "path", "acted", "data-step")).containsExactlyElementsOf(acted);
    assertThat(evictions(svg)).containsExactlyElementsOf(evicted);
    assertThat(new HashSet<>(attrs(svg, "rect", "condition", "data-condition")))
        .isEqualTo(new HashSet<>(conditions));
    int observations = plans.stream().mapToInt(p -> p.observations().size()).sum();
    assertThat(elements(svg, "circle", "observation")).hasSize(observations);

    // each eviction's tooltip names the pod, the grace period and the rule trail
    for (Element e : elements(svg, "circle", "eviction")) {
      EvictionDecision d = decision(plans, e);
      String title = title(e);
      assertThat(title)
          .contains(d.pod().key(), "grace period " + d.gracePeriodSeconds() + "s", d.message())
          .contains(String.join(" \u2190 ", d.rules()));
    }
    // every coordinate the renderer wrote lies inside the picture
    for (Element e : all(root)) {
      for (double[] pt : points(e)) {
        assertThat(pt[0]).as(describe(e)).isBetween(0.0, vb[0]);
        assertThat(pt[1]).as(describe(e)).isBetween(0.0, vb[1]);
      }
    }
    // the tables below: every eviction with its rule trail, the ranking head with a count
    for (EvictionPlan p : plans) {
      for (EvictionDecision d : p.decisions()) {
        assertThat(page).contains(TimelineHtml.esc(String.join(" \u2190 ", d.rules())));
      }
      if (p.ranking().size() > TimelineHtml.RANKING_ROWS) {
        assertThat(page)
            .contains(
                String.format(
                    "and %,d more pods (%,d ranked",
                    p.ranking().size() - TimelineHtml.RANKING_ROWS, p.ranking().size()));
      }
    }
    long rankingRows = Pattern.compile("<table class=\"ranking\">").matcher(page).results().count();
    assertThat(rankingRows).isEqualTo(plans.stream().filter(p -> !p.ranking().isEmpty()).count());
    assertThat(page.length()).as("5,000 pods stay a small page").isLessThan(200_000);
  }

  @ParameterizedTest
  @ValueSource(strings = {SOFT, RATE_GUARD, RATE_GUARD + " --against default", SCALE})
  @Tag("chromium")
  void chromiumShowsItWithEveryLabelInsideThePictureAndClearOfTheOthers(
      String command, @TempDir Path dir) throws Exception {
    Path chromium = chromium();
    String[] words = command.split(" ");
    String fixture = words[0];
    String page = render(dir, fixture, java.util.Arrays.copyOfRange(words, 1, words.length));
    Document svg = svg(page);
    double[] vb = viewBox(svg.getDocumentElement());

    Path png = dir.resolve("timeline.png");
    Chromium.run(
        chromium,
        dir,
        "--screenshot=" + png,
        "--window-size=1280,1600",
        dir.resolve("timeline.html"));
    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).as("a PNG").isNotNull();
    assertThat(image.getWidth()).isEqualTo(1280);
    assertThat(colours(image)).as("something is drawn, not a blank page").isGreaterThan(20);
    keep(
        png,
        Path.of(fixture).getFileName().toString().replace(".yaml", "")
            + (words.length > 1 ? "-against" : "")
            + ".png");

    JsonNode layout = layout(chromium, dir, page);
    assertThat(layout.get("width").asDouble()).isEqualTo(vb[0]);
    List<double[]> boxes = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (JsonNode t : layout.get("texts")) {
      double[] b = {
        t.get("x").asDouble(), t.get("y").asDouble(), t.get("w").asDouble(), t.get("h").asDouble()
      };
      String name = t.get("cls").asString() + " \"" + t.get("s").asString() + "\"";
      assertThat(b[2]).as("%s is drawn", name).isGreaterThan(0);
      assertThat(b[0]).as("%s starts inside the picture", name).isGreaterThanOrEqualTo(0);
      assertThat(b[1]).as("%s starts inside the picture", name).isGreaterThanOrEqualTo(0);
      assertThat(b[0] + b[2]).as("%s ends inside the picture", name).isLessThanOrEqualTo(vb[0]);
      assertThat(b[1] + b[3]).as("%s ends inside the picture", name).isLessThanOrEqualTo(vb[1]);
      for (int i = 0; i < boxes.size(); i++) {
        assertThat(overlap(boxes.get(i), b))
            .as("%s overlaps %s", name, names.get(i))
            .isLessThan(1.5);
      }
      boxes.add(b);
      names.add(name);
    }
    assertThat(names).anyMatch(n -> n.startsWith("lane-title"));
    for (JsonNode m : layout.get("marks")) {
      String name = m.get("cls").asString();
      assertThat(m.get("x").asDouble()).as(name).isGreaterThanOrEqualTo(0);
      assertThat(m.get("y").asDouble()).as(name).isGreaterThanOrEqualTo(0);
      assertThat(m.get("x").asDouble() + m.get("w").asDouble()).as(name).isLessThanOrEqualTo(vb[0]);
      assertThat(m.get("y").asDouble() + m.get("h").asDouble()).as(name).isLessThanOrEqualTo(vb[1]);
    }
    assertThat(layout.get("marks").size())
        .as("Chromium laid out every marker the SVG has")
        .isEqualTo(layout.get("expectedMarks").asInt())
        .isPositive();
  }

  @Test
  @Tag("chromium")
  void namesAndMessagesFromTheFixtureAreTextNeverMarkup(@TempDir Path dir) throws Exception {
    Path fixture = dir.resolve("evil.yaml");
    Files.writeString(fixture, EVIL_FIXTURE);
    String page = render(dir, fixture.toString());
    String key = EVIL_NAMESPACE + "/" + EVIL_NAME;
    assertThat(page).doesNotContain("<script", EVIL_NAME).contains(TimelineHtml.esc(key));
    Document svg = svg(page);
    assertThat(attrs(svg, "circle", "eviction", "data-pod"))
        .as("the attribute carries the name exactly")
        .containsExactly(key);

    Path chromium = chromium();
    String dom = Chromium.run(chromium, dir, "--dump-dom", dir.resolve("timeline.html")).stdout();
    assertThat(dom)
        .contains("evil &lt;script&gt;alert(2)&lt;/script&gt;")
        .doesNotContain("<script");
    assertThat(dom).contains("&lt;script&gt;alert(1)&lt;/script&gt;\"x");
  }

  @Test
  void againstASecondRuleSetMarksTheStepsWhereTheyDecideDifferently(@TempDir Path dir)
      throws Exception {
    String page = render(dir, RATE_GUARD, "--against", "default");
    Fixture f = FixtureLoader.load(Path.of(RATE_GUARD));
    RuleSet a = RuleCompiler.compile(f.rules());
    RuleSet b = RuleCompiler.compileDefault();
    List<EvictionPlan> pa = new FixtureRunner(p -> a).run(f, false).plans();
    List<EvictionPlan> pb = new FixtureRunner(p -> b).run(f, false).plans();
    List<String> differing = new ArrayList<>();
    List<String> evictedB = new ArrayList<>();
    for (int i = 0; i < pa.size(); i++) {
      List<String> d = new ArrayList<>();
      DiffCommand.compare(i + 1, pa.get(i), pb.get(i), d);
      if (!d.isEmpty()) {
        differing.add(String.valueOf(i + 1));
      }
      for (EvictionDecision e : pb.get(i).decisions()) {
        evictedB.add((i + 1) + " " + e.pod().key());
      }
    }
    assertThat(differing).as("the example differs from the defaults").isNotEmpty();
    Document svg = svg(page);
    assertThat(attrs(svg, "rect", "diff", "data-step")).containsExactlyElementsOf(differing);
    assertThat(attrs(svg, "path", "diff-mark", "data-step")).containsExactlyElementsOf(differing);
    assertThat(evictions(svg)).containsAll(evictedB);
    assertThat(page)
        .contains("Where the rule sets decide differently")
        .contains("they decide differently at " + differing.size() + " of " + pa.size());
  }

  @Test
  void planDrawsOneCapturedSync(@TempDir Path dir) throws Exception {
    Path kc = dir.resolve("kubelet.yaml");
    Files.writeString(kc, "kind: KubeletConfiguration\nevictionHard: {memory.available: 1Gi}\n");
    Path pods = dir.resolve("pods.yaml");
    Files.writeString(
        pods,
        "apiVersion: v1\nkind: PodList\nitems:\n"
            + "  - metadata: {name: web, namespace: prod, uid: u-web}\n"
            + "    spec: {priority: 100, containers: [{name: c}]}\n"
            + "  - metadata: {name: batch, namespace: jobs, uid: u-batch}\n"
            + "    spec: {containers: [{name: c}]}\n");
    Path summary = dir.resolve("summary.json");
    Files.writeString(
        summary,
        "{\"node\": {\"nodeName\": \"worker-7\", \"memory\": {\"availableBytes\": 536870912,"
            + " \"workingSetBytes\": 7516192768}}, \"pods\": [{\"podRef\": {\"name\": \"web\","
            + " \"namespace\": \"prod\", \"uid\": \"u-web\"}, \"memory\": {\"workingSetBytes\":"
            + " 104857600}}, {\"podRef\": {\"name\": \"batch\", \"namespace\": \"jobs\", \"uid\":"
            + " \"u-batch\"}, \"memory\": {\"workingSetBytes\": 2147483648}}]}");
    Path html = dir.resolve("plan.html");
    CliTest.Run r =
        CliTest.run(
            "plan",
            "--html",
            html.toString(),
            "--against",
            "default",
            "--config",
            kc.toString(),
            "--pods",
            pods.toString(),
            "--summary",
            summary.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).isEqualTo("plan of 2 pods written to " + html + "\n");
    String page = Files.readString(html);
    Document svg = svg(page);
    assertThat(attrs(svg, "g", "lane signal", "data-signal")).containsExactly("memory.available");
    assertThat(evictions(svg)).containsExactly("1 jobs/batch", "1 jobs/batch");
    assertThat(elements(svg, "rect", "diff")).isEmpty();
    assertThat(page).contains("node <code>worker-7</code>", "decide the same at every step");

    CliTest.Run unwritable =
        CliTest.run(
            "plan",
            "--html",
            dir.resolve("no/such/dir/plan.html").toString(),
            "--config",
            kc.toString(),
            "--pods",
            pods.toString(),
            "--summary",
            summary.toString());
    assertThat(unwritable.code()).isEqualTo(2);
    assertThat(unwritable.err())
        .startsWith("evictd: --html " + dir.resolve("no/such/dir/plan.html") + ": cannot write")
        .doesNotContain("\tat ");
  }

  @Test
  void againstWithoutHtmlIsBadInput() {
    CliTest.Run r = CliTest.run("replay", "--against", "default", SOFT);
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("--against needs --html");
  }

  @Test
  void escapingKeepsTheSvgWellFormedWhateverTheTextHolds() throws Exception {
    String hostile = "a<b>&\"'\u0000\u0007\u001b\ud800 \u202e\ud83d\ude00z";
    String escaped = TimelineHtml.esc(hostile);
    assertThat(escaped).doesNotContain("<", ">", "\"", "'", "\u0000", "\u001b");
    Document d = parse("<t a=\"" + escaped + "\">" + escaped + "</t>");
    String back = d.getDocumentElement().getAttribute("a");
    assertThat(back).startsWith("a<b>&\"'").endsWith("\ud83d\ude00z");
    assertThat(d.getDocumentElement().getTextContent()).isEqualTo(back);
  }

  // ---- the SVG as XML

  static Document svg(String page) throws Exception {
    int from = page.indexOf("<svg");
    int to = page.indexOf("</svg>");
    assertThat(from).as("an inline SVG").isPositive();
    assertThat(page.indexOf("<svg", from + 1)).as("one picture").isEqualTo(-1);
    return parse(page.substring(from, to + "</svg>".length()));
  }

  static Document parse(String xml) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return f.newDocumentBuilder()
        .parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
  }

  static double[] viewBox(Element svg) {
    String[] v = svg.getAttribute("viewBox").split(" ");
    assertThat(v).hasSize(4);
    assertThat(v[0] + " " + v[1]).isEqualTo("0 0");
    return new double[] {Double.parseDouble(v[2]), Double.parseDouble(v[3])};
  }

  static List<Element> elements(Document d, String tag, String cls) {
    List<Element> out = new ArrayList<>();
    NodeList nl = d.getElementsByTagNameNS("*", tag);
    for (int i = 0; i < nl.getLength(); i++) {
      Element e = (Element) nl.item(i);
      if ((" " + e.getAttribute("class") + " ").contains(" " + cls + " ")) {
        out.add(e);
      }
    }
    return out;
  }

  static List<String> attrs(Document d, String tag, String cls, String attr) {
    return elements(d, tag, cls).stream().map(e -> e.getAttribute(attr)).toList();
  }

  static List<String> evictions(Document d) {
    return elements(d, "circle", "eviction").stream()
        .map(e -> e.getAttribute("data-step") + " " + e.getAttribute("data-pod"))
        .toList();
  }

  static EvictionDecision decision(List<EvictionPlan> plans, Element e) {
    EvictionPlan p = plans.get(Integer.parseInt(e.getAttribute("data-step")) - 1);
    return p.decisions().stream()
        .filter(d -> d.pod().key().equals(e.getAttribute("data-pod")))
        .findFirst()
        .orElseThrow();
  }

  static String title(Element e) {
    NodeList t = e.getElementsByTagNameNS("*", "title");
    assertThat(t.getLength()).as(describe(e) + " has a tooltip").isEqualTo(1);
    return t.item(0).getTextContent();
  }

  static List<Element> all(Element root) {
    List<Element> out = new ArrayList<>();
    NodeList nl = root.getElementsByTagNameNS("*", "*");
    for (int i = 0; i < nl.getLength(); i++) {
      out.add((Element) nl.item(i));
    }
    return out;
  }

  static final Pattern NUMBER = Pattern.compile("-?\\d+(?:\\.\\d+)?");

  /** Every absolute point an element names (no transforms are used). */
  static List<double[]> points(Element e) {
    List<double[]> out = new ArrayList<>();
    String[][] pairs = {{"x", "y"}, {"cx", "cy"}, {"x1", "y1"}, {"x2", "y2"}};
    for (String[] p : pairs) {
      if (e.hasAttribute(p[0]) && e.hasAttribute(p[1])) {
        out.add(
            new double[] {
              Double.parseDouble(e.getAttribute(p[0])), Double.parseDouble(e.getAttribute(p[1]))
            });
      }
    }
    if (e.hasAttribute("width") && e.hasAttribute("x")) {
      out.add(
          new double[] {
            Double.parseDouble(e.getAttribute("x")) + Double.parseDouble(e.getAttribute("width")),
            Double.parseDouble(e.getAttribute("y")) + Double.parseDouble(e.getAttribute("height"))
          });
    }
    String path = e.hasAttribute("d") ? e.getAttribute("d") : e.getAttribute("points");
    Matcher m = NUMBER.matcher(path);
    List<Double> nums = new ArrayList<>();
    while (m.find()) {
      nums.add(Double.parseDouble(m.group()));
    }
    for (int i = 0; i + 1 < nums.size(); i += 2) {
      out.add(new double[] {nums.get(i), nums.get(i + 1)});
    }
    return out;
  }

  static String describe(Element e) {
    return "<" + e.getLocalName() + " class=\"" + e.getAttribute("class") + "\">";
  }

  // ---- Chromium

  /** The area two boxes share, in square pixels. */
  static double overlap(double[] a, double[] b) {
    double w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
    double h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
    return w <= 0 || h <= 0 ? 0 : Math.min(w, h);
  }

  static int colours(BufferedImage image) {
    Set<Integer> seen = new HashSet<>();
    for (int y = 0; y < image.getHeight(); y += 3) {
      for (int x = 0; x < image.getWidth(); x += 3) {
        seen.add(image.getRGB(x, y));
      }
    }
    return seen.size();
  }

  static void keep(Path png, String name) throws IOException {
    String out = System.getProperty("evictd.timeline.out");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      Files.copy(png, Path.of(out, name), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** Chromium: {@code -Devictd.chromium=PATH} if given, else {@code chromium} on the PATH. */
  static Path chromium() {
    String given = System.getProperty("evictd.chromium");
    if (given != null) {
      assumeTrue(
          Files.isExecutable(Path.of(given)),
          "-Devictd.chromium=" + given + " is not an executable: not rendered");
      return Path.of(given);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      for (String name : List.of("chromium", "chromium-browser")) {
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) {
          return p;
        }
      }
    }
    assumeTrue(false, "no chromium on PATH (Debian: apt-get install chromium): not rendered");
    return null;
  }

  /**
   * The laid-out boxes of the picture's labels and markers, measured by Chromium: the page with a
   * probe script appended (and its no-script policy removed, in this copy only).
   */
  static JsonNode layout(Path chromium, Path dir, String page) throws Exception {
    String probe =
        """
        <script>
        (function () {
          var svg = document.querySelector('svg.timeline');
          var vb = svg.viewBox.baseVal;
          var out = {width: vb.width, height: vb.height, texts: [], marks: []};
          svg.querySelectorAll('text').forEach(function (t) {
            var b = t.getBBox();
            out.texts.push({cls: t.getAttribute('class'), s: t.firstChild ? t.firstChild.nodeValue : '',
                            x: b.x, y: b.y, w: b.width, h: b.height});
          });
          var sel = '.eviction, .acted, .reclaim, .failed, .condition, .grace, .threshold, .available, .observation, .diff, .diff-mark, .min-reclaim';
          var marks = svg.querySelectorAll(sel);
          out.expectedMarks = marks.length;
          marks.forEach(function (e) {
            var b = e.getBBox();
            out.marks.push({cls: e.getAttribute('class'), x: b.x, y: b.y, w: b.width, h: b.height});
          });
          var pre = document.createElement('pre');
          pre.id = 'layout';
          pre.textContent = JSON.stringify(out);
          document.body.appendChild(pre);
        })();
        </script>
        """;
    String probed =
        page.replaceFirst("<meta http-equiv=\"Content-Security-Policy\"[^>]*>", "")
            .replace("</body>", probe + "</body>");
    Path file = dir.resolve("probe.html");
    Files.writeString(file, probed);
    String dom = Chromium.run(chromium, dir, "--dump-dom", file).stdout();
    int from = dom.indexOf("<pre id=\"layout\">");
    assertThat(from)
        .as("the probe ran:\n" + dom.substring(0, Math.min(500, dom.length())))
        .isPositive();
    String json = dom.substring(from + "<pre id=\"layout\">".length(), dom.indexOf("</pre>", from));
    json =
        json.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&nbsp;", "\u00a0")
            .replace("&amp;", "&");
    return JsonMapper.builder().build().readTree(json);
  }

  /** Headless Chromium, offline: no background traffic, every fetch sent to a closed port. */
  static final class Chromium {
    record Result(String stdout) {}

    static Result run(Path chromium, Path dir, String action, Object... rest) throws Exception {
      List<String> cmd =
          new ArrayList<>(
              List.of(
                  chromium.toString(),
                  "--headless",
                  "--disable-gpu",
                  "--no-sandbox",
                  "--hide-scrollbars",
                  "--no-first-run",
                  "--disable-background-networking",
                  "--disable-component-update",
                  "--disable-sync",
                  "--disable-extensions",
                  "--proxy-server=http://127.0.0.1:9",
                  "--user-data-dir=" + dir.resolve("chromium-profile"),
                  action));
      for (int i = 0; i < rest.length - 1; i++) {
        cmd.add(rest[i].toString());
      }
      cmd.add(((Path) rest[rest.length - 1]).toUri().toString());
      Path out = dir.resolve("chromium.out");
      Path err = dir.resolve("chromium.err");
      Process p =
          new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      try {
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
          throw new AssertionError("chromium did not finish within 120 s: " + cmd);
        }
      } finally {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
      assertThat(p.exitValue()).as("chromium: " + Files.readString(err)).isZero();
      return new Result(Files.readString(out));
    }
  }
}
