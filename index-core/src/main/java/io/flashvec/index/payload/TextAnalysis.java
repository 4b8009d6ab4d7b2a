package io.flashvec.index.payload;

import io.flashvec.index.InvalidInputException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.ar.ArabicAnalyzer;
import org.apache.lucene.analysis.bn.BengaliAnalyzer;
import org.apache.lucene.analysis.ca.CatalanAnalyzer;
import org.apache.lucene.analysis.da.DanishAnalyzer;
import org.apache.lucene.analysis.de.GermanAnalyzer;
import org.apache.lucene.analysis.el.GreekAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.es.SpanishAnalyzer;
import org.apache.lucene.analysis.eu.BasqueAnalyzer;
import org.apache.lucene.analysis.fi.FinnishAnalyzer;
import org.apache.lucene.analysis.fr.FrenchAnalyzer;
import org.apache.lucene.analysis.hu.HungarianAnalyzer;
import org.apache.lucene.analysis.id.IndonesianAnalyzer;
import org.apache.lucene.analysis.it.ItalianAnalyzer;
import org.apache.lucene.analysis.ne.NepaliAnalyzer;
import org.apache.lucene.analysis.nl.DutchAnalyzer;
import org.apache.lucene.analysis.no.NorwegianAnalyzer;
import org.apache.lucene.analysis.pt.PortugueseAnalyzer;
import org.apache.lucene.analysis.ro.RomanianAnalyzer;
import org.apache.lucene.analysis.ru.RussianAnalyzer;
import org.apache.lucene.analysis.sv.SwedishAnalyzer;
import org.apache.lucene.analysis.tr.TurkishAnalyzer;
import org.tartarus.snowball.SnowballStemmer;
import org.tartarus.snowball.ext.ArabicStemmer;
import org.tartarus.snowball.ext.ArmenianStemmer;
import org.tartarus.snowball.ext.DanishStemmer;
import org.tartarus.snowball.ext.DutchStemmer;
import org.tartarus.snowball.ext.EnglishStemmer;
import org.tartarus.snowball.ext.FinnishStemmer;
import org.tartarus.snowball.ext.FrenchStemmer;
import org.tartarus.snowball.ext.GermanStemmer;
import org.tartarus.snowball.ext.GreekStemmer;
import org.tartarus.snowball.ext.HungarianStemmer;
import org.tartarus.snowball.ext.ItalianStemmer;
import org.tartarus.snowball.ext.NorwegianStemmer;
import org.tartarus.snowball.ext.PortugueseStemmer;
import org.tartarus.snowball.ext.RomanianStemmer;
import org.tartarus.snowball.ext.RussianStemmer;
import org.tartarus.snowball.ext.SpanishStemmer;
import org.tartarus.snowball.ext.SwedishStemmer;
import org.tartarus.snowball.ext.TamilStemmer;
import org.tartarus.snowball.ext.TurkishStemmer;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's text index options {@code stopwords} and {@code stemmer}, parsed and turned into the
 * Lucene filters the text analyzer applies at index and query time alike: a language's stop words
 * are Lucene's list for it (its {@code <Language>Analyzer}'s default set, not Qdrant's own lists,
 * so a few words differ), stemming is Lucene's Snowball stemmer of the language.
 */
final class TextAnalysis {

  /** Stop word lists by Qdrant's language name; Qdrant's languages Lucene has no list for fail. */
  private static final Map<String, Supplier<CharArraySet>> STOPWORDS = new TreeMap<>();

  /** Snowball stemmers by Qdrant's language name (all of Qdrant's). */
  private static final Map<String, Supplier<SnowballStemmer>> STEMMERS = new TreeMap<>();

  /** Qdrant's two-letter aliases of language names. */
  private static final Map<String, String> ALIASES =
      Map.ofEntries(
          Map.entry("ar", "arabic"),
          Map.entry("hy", "armenian"),
          Map.entry("eu", "basque"),
          Map.entry("bn", "bengali"),
          Map.entry("ca", "catalan"),
          Map.entry("da", "danish"),
          Map.entry("nl", "dutch"),
          Map.entry("en", "english"),
          Map.entry("fi", "finnish"),
          Map.entry("fr", "french"),
          Map.entry("de", "german"),
          Map.entry("el", "greek"),
          Map.entry("hu", "hungarian"),
          Map.entry("id", "indonesian"),
          Map.entry("it", "italian"),
          Map.entry("ne", "nepali"),
          Map.entry("no", "norwegian"),
          Map.entry("pt", "portuguese"),
          Map.entry("ro", "romanian"),
          Map.entry("ru", "russian"),
          Map.entry("es", "spanish"),
          Map.entry("sv", "swedish"),
          Map.entry("ta", "tamil"),
          Map.entry("tr", "turkish"));

  static {
    STOPWORDS.put("arabic", ArabicAnalyzer::getDefaultStopSet);
    STOPWORDS.put("basque", BasqueAnalyzer::getDefaultStopSet);
    STOPWORDS.put("bengali", BengaliAnalyzer::getDefaultStopSet);
    STOPWORDS.put("catalan", CatalanAnalyzer::getDefaultStopSet);
    STOPWORDS.put("danish", DanishAnalyzer::getDefaultStopSet);
    STOPWORDS.put("dutch", DutchAnalyzer::getDefaultStopSet);
    STOPWORDS.put("english", () -> EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
    STOPWORDS.put("finnish", FinnishAnalyzer::getDefaultStopSet);
    STOPWORDS.put("french", FrenchAnalyzer::getDefaultStopSet);
    STOPWORDS.put("german", GermanAnalyzer::getDefaultStopSet);
    STOPWORDS.put("greek", GreekAnalyzer::getDefaultStopSet);
    STOPWORDS.put("hungarian", HungarianAnalyzer::getDefaultStopSet);
    STOPWORDS.put("indonesian", IndonesianAnalyzer::getDefaultStopSet);
    STOPWORDS.put("italian", ItalianAnalyzer::getDefaultStopSet);
    STOPWORDS.put("nepali", NepaliAnalyzer::getDefaultStopSet);
    STOPWORDS.put("norwegian", NorwegianAnalyzer::getDefaultStopSet);
    STOPWORDS.put("portuguese", PortugueseAnalyzer::getDefaultStopSet);
    STOPWORDS.put("romanian", RomanianAnalyzer::getDefaultStopSet);
    STOPWORDS.put("russian", RussianAnalyzer::getDefaultStopSet);
    STOPWORDS.put("spanish", SpanishAnalyzer::getDefaultStopSet);
    STOPWORDS.put("swedish", SwedishAnalyzer::getDefaultStopSet);
    STOPWORDS.put("turkish", TurkishAnalyzer::getDefaultStopSet);

    STEMMERS.put("arabic", ArabicStemmer::new);
    STEMMERS.put("armenian", ArmenianStemmer::new);
    STEMMERS.put("danish", DanishStemmer::new);
    STEMMERS.put("dutch", DutchStemmer::new);
    STEMMERS.put("english", EnglishStemmer::new);
    STEMMERS.put("finnish", FinnishStemmer::new);
    STEMMERS.put("french", FrenchStemmer::new);
    STEMMERS.put("german", GermanStemmer::new);
    STEMMERS.put("greek", GreekStemmer::new);
    STEMMERS.put("hungarian", HungarianStemmer::new);
    STEMMERS.put("italian", ItalianStemmer::new);
    STEMMERS.put("norwegian", NorwegianStemmer::new);
    STEMMERS.put("portuguese", PortugueseStemmer::new);
    STEMMERS.put("romanian", RomanianStemmer::new);
    STEMMERS.put("russian", RussianStemmer::new);
    STEMMERS.put("spanish", SpanishStemmer::new);
    STEMMERS.put("swedish", SwedishStemmer::new);
    STEMMERS.put("tamil", TamilStemmer::new);
    STEMMERS.put("turkish", TurkishStemmer::new);
  }

  private TextAnalysis() {}

  /**
   * Parses Qdrant's {@code stopwords}: a language ({@code "english"}) or {@code {"languages":
   * [...], "custom": [...]}}, into {@code languages} (Qdrant's full names) and {@code custom}.
   */
  static void stopwords(JsonNode n, List<String> languages, List<String> custom) {
    if (n == null || n.isNull()) {
      return;
    }
    if (n.isString()) {
      languages.add(stopwordLanguage(n));
      return;
    }
    if (!n.isObject()) {
      throw invalid("stopwords", "must be a language or {languages, custom}", n);
    }
    for (var e : n.properties()) {
      JsonNode v = e.getValue();
      switch (e.getKey()) {
        case "languages" -> {
          if (v.isNull()) {
            continue;
          }
          if (!v.isArray()) {
            throw invalid("stopwords.languages", "must be a list of languages", v);
          }
          for (JsonNode l : v) {
            String name = stopwordLanguage(l);
            if (!languages.contains(name)) {
              languages.add(name);
            }
          }
        }
        case "custom" -> {
          if (v.isNull()) {
            continue;
          }
          if (!v.isArray()) {
            throw invalid("stopwords.custom", "must be a list of words", v);
          }
          for (JsonNode w : v) {
            if (!w.isString()) {
              throw invalid("stopwords.custom", "must be a list of words", v);
            }
            if (!custom.contains(w.asString())) {
              custom.add(w.asString());
            }
          }
        }
        default -> throw invalid("stopwords", "unknown field " + e.getKey(), n);
      }
    }
  }

  private static String stopwordLanguage(JsonNode l) {
    String name = language(l, "stopwords");
    if (!STOPWORDS.containsKey(name)) {
      throw invalid(
          "stopwords",
          "no stop word list for this language; FlashVec has "
              + String.join(", ", STOPWORDS.keySet()),
          l);
    }
    return name;
  }

  /**
   * Parses Qdrant's {@code stemmer}: {@code {"type": "snowball", "language": "english"}}, or {@code
   * {"type": "none"}} (no stemming, returned as {@code null}).
   */
  static String stemmer(JsonNode n) {
    if (n == null || n.isNull()) {
      return null;
    }
    String type = n.isObject() ? n.path("type").asString("") : "";
    if (type.equals("none") && n.size() == 1) {
      return null;
    }
    if (!type.equals("snowball")) {
      throw invalid(
          "stemmer",
          "must be {\"type\": \"snowball\", \"language\": ...} or {\"type\": \"none\"}",
          n);
    }
    for (var e : n.properties()) {
      if (!e.getKey().equals("type") && !e.getKey().equals("language")) {
        throw invalid("stemmer", "unknown field " + e.getKey(), n);
      }
    }
    String name = language(n.get("language"), "stemmer.language");
    if (!STEMMERS.containsKey(name)) {
      throw invalid(
          "stemmer.language",
          "no Snowball stemmer for this language; FlashVec has "
              + String.join(", ", STEMMERS.keySet()),
          n.get("language"));
    }
    return name;
  }

  /**
   * The stop words of {@code languages} and {@code custom} together, matched ignoring case when the
   * index lowercases ({@code ignoreCase}), else exactly as written (Qdrant: with {@code lowercase:
   * false}, {@code LAZY} stops {@code LAZY} but not {@code lazy}).
   */
  static CharArraySet stopSet(List<String> languages, List<String> custom, boolean ignoreCase) {
    CharArraySet set = new CharArraySet(64, ignoreCase);
    for (String l : languages) {
      set.addAll(STOPWORDS.get(l).get());
    }
    set.addAll(custom);
    return CharArraySet.unmodifiableSet(set);
  }

  /** A new stemmer of {@code language} (a name {@link #stemmer} returned); not thread-safe. */
  static SnowballStemmer newStemmer(String language) {
    return STEMMERS.get(language).get();
  }

  private static String language(JsonNode l, String field) {
    if (l == null || !l.isString()) {
      throw invalid(field, "must be a language name", l);
    }
    String name = l.asString().toLowerCase(Locale.ROOT);
    return ALIASES.getOrDefault(name, name);
  }

  private static InvalidInputException invalid(String field, String why, JsonNode v) {
    return new InvalidInputException(
        "Wrong input: field_schema." + field + ": " + why + " [" + field + "=" + v + "]");
  }
}
