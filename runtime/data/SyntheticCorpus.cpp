//===- SyntheticCorpus.cpp - Seeded corpora for demos and tests -----------===//

#include "runtime/data/SyntheticCorpus.h"

#include "runtime/data/Corpus.h"
#include "runtime/data/Rng.h"

#include <fmt/format.h>

#include <fstream>
#include <string_view>
#include <vector>

namespace xlnetc::rt::data {

namespace {

//===----------------------------------------------------------------------===//
// Demo grammar
//===----------------------------------------------------------------------===//

using Words = std::vector<std::string_view>;

const Words kNames = {
    "Anna",  "Ben",   "Clara", "David",  "Emma",   "Felix", "Grace",  "Henry",
    "Iris",  "Jack",  "Kate",  "Leo",    "Maria",  "Noah",  "Olivia", "Peter",
    "Quinn", "Rosa",  "Sam",   "Tara",   "Victor", "Wendy", "Yusuf",  "Zoe",
    "Alice", "Bruno", "Chloe", "Daniel", "Elena",  "Frank", "Hannah", "Ivan",
    "Julia", "Karl",  "Lena",  "Martin", "Nina",   "Oscar", "Paula",  "Ruth"};

const Words kTowns = {"Ashford",   "Brookfield", "Cedarville", "Dunmore",
                      "Eastwick",  "Fairhaven",  "Glenwood",   "Highbridge",
                      "Ivydale",   "Kingsport",  "Lakeside",   "Millbrook",
                      "Northgate", "Oakridge",   "Pinecrest",  "Redcliff",
                      "Stonebury", "Thornton",   "Westmere",   "Willowby"};

const Words kPlaces = {
    "village", "city",   "harbor",   "market",  "school",  "library",
    "forest",  "river",  "mountain", "garden",  "station", "kitchen",
    "museum",  "park",   "bridge",   "castle",  "farm",    "island",
    "valley",  "beach",  "hospital", "bakery",  "factory", "office",
    "theater", "church", "square",   "lake",    "desert",  "airport",
    "tower",   "cafe",   "hotel",    "street",  "field",   "cave",
    "shop",    "port",   "temple",   "workshop"};

/// Singular object nouns; plural adds "s" (the list avoids irregulars).
const Words kObjects = {
    "book",    "letter",   "key",       "box",      "lamp",     "map",
    "coin",    "ring",     "bottle",    "basket",   "apple",    "bread",
    "cake",    "cup",      "chair",     "table",    "window",   "door",
    "bicycle", "boat",     "car",       "train",    "horse",    "dog",
    "cat",     "bird",     "flower",    "tree",     "stone",    "candle",
    "clock",   "coat",     "hat",       "shoe",     "bag",      "spoon",
    "plate",   "picture",  "song",      "story",    "question", "plan",
    "gift",    "ticket",   "newspaper", "camera",   "phone",    "radio",
    "guitar",  "piano",    "ball",      "kite",     "rope",     "ladder",
    "bucket",  "hammer",   "nail",      "blanket",  "pillow",   "mirror",
    "carpet",  "bell",     "feather",   "shell",    "egg",      "cheese",
    "lemon",   "orange",   "potato",    "tomato",   "carrot",   "onion",
    "pepper",  "pencil",   "pen",       "notebook", "envelope", "stamp",
    "wallet",  "umbrella", "jacket",    "glove",    "scarf",    "drum",
    "violin",  "toy",      "puzzle",    "card",     "tent",     "sail",
    "wheel",   "engine",   "button",    "needle",   "thread",   "brush",
    "bowl",    "jar",      "pot",       "vase"};

const Words kColours = {"red",   "blue",  "green", "yellow", "black",
                        "white", "brown", "grey",  "purple", "orange"};

const Words kMaterials = {"wooden", "metal",  "glass",   "paper",  "stone",
                          "silver", "golden", "plastic", "woolen", "leather"};

const Words kAdjectives = {
    "old",      "young",   "small",   "big",     "quiet",  "loud",    "happy",
    "sad",      "bright",  "dark",    "warm",    "cold",   "heavy",   "light",
    "new",      "strange", "famous",  "tired",   "clever", "brave",   "gentle",
    "busy",     "empty",   "full",    "clean",   "dirty",  "soft",    "hard",
    "sweet",    "bitter",  "tall",    "short",   "narrow", "wide",    "rich",
    "poor",     "early",   "late",    "quick",   "slow",   "careful", "curious",
    "friendly", "lonely",  "proud",   "calm",    "wild",   "tiny",    "huge",
    "broken",   "shiny",   "simple",  "ancient", "modern", "hidden",  "lucky",
    "polite",   "honest",  "angry",   "nervous", "sleepy", "hungry",  "thirsty",
    "funny",    "serious", "rare",    "common",  "fresh",  "dusty",   "rusty",
    "smooth",   "rough",   "fragile", "noisy",   "kind",   "cheerful"};

/// Transitive verbs: base and past.
const std::vector<std::pair<std::string_view, std::string_view>> kVerbs = {
    {"find", "found"},        {"lose", "lost"},
    {"buy", "bought"},        {"sell", "sold"},
    {"carry", "carried"},     {"paint", "painted"},
    {"open", "opened"},       {"close", "closed"},
    {"repair", "repaired"},   {"clean", "cleaned"},
    {"build", "built"},       {"break", "broke"},
    {"borrow", "borrowed"},   {"return", "returned"},
    {"hide", "hid"},          {"show", "showed"},
    {"take", "took"},         {"make", "made"},
    {"wash", "washed"},       {"drop", "dropped"},
    {"pack", "packed"},       {"fold", "folded"},
    {"lift", "lifted"},       {"move", "moved"},
    {"count", "counted"},     {"draw", "drew"},
    {"polish", "polished"},   {"keep", "kept"},
    {"hold", "held"},         {"fix", "fixed"},
    {"check", "checked"},     {"study", "studied"},
    {"watch", "watched"},     {"follow", "followed"},
    {"catch", "caught"},      {"throw", "threw"},
    {"choose", "chose"},      {"describe", "described"},
    {"measure", "measured"},  {"collect", "collected"},
    {"deliver", "delivered"}, {"order", "ordered"},
    {"wrap", "wrapped"},      {"sort", "sorted"},
    {"weigh", "weighed"},     {"guard", "guarded"},
    {"bring", "brought"},     {"send", "sent"},
    {"forget", "forgot"},     {"remember", "remembered"}};

/// Intransitive verbs: base and past.
const std::vector<std::pair<std::string_view, std::string_view>> kIntrans = {
    {"walk", "walked"},         {"run", "ran"},         {"sleep", "slept"},
    {"laugh", "laughed"},       {"wait", "waited"},     {"sing", "sang"},
    {"dance", "danced"},        {"rest", "rested"},     {"smile", "smiled"},
    {"work", "worked"},         {"travel", "traveled"}, {"arrive", "arrived"},
    {"swim", "swam"},           {"climb", "climbed"},   {"cook", "cooked"},
    {"read", "read"},           {"write", "wrote"},     {"listen", "listened"},
    {"whisper", "whispered"},   {"shout", "shouted"},   {"sit", "sat"},
    {"stand", "stood"},         {"hurry", "hurried"},   {"wander", "wandered"},
    {"play", "played"},         {"think", "thought"},   {"dream", "dreamed"},
    {"complain", "complained"}, {"agree", "agreed"},    {"stay", "stayed"}};

const Words kAdverbs = {
    "quickly",  "slowly",    "quietly",    "carefully", "happily",
    "suddenly", "finally",   "gently",     "proudly",   "nervously",
    "loudly",   "patiently", "eagerly",    "calmly",    "politely",
    "bravely",  "sadly",     "cheerfully", "silently",  "honestly",
    "kindly",   "angrily",   "softly",     "boldly",    "lazily"};

const Words kTimes = {
    "In the morning",   "At night",       "On Monday",     "On Tuesday",
    "On Wednesday",     "On Thursday",    "On Friday",     "On Saturday",
    "On Sunday",        "After lunch",    "Before dinner", "Every day",
    "Last week",        "In the evening", "At noon",       "Later that day",
    "The next morning", "In the spring",  "In the winter", "One afternoon"};

const Words kNumbers = {"two",   "three", "four", "five",   "six",   "seven",
                        "eight", "nine",  "ten",  "eleven", "twelve"};

const Words kWeather = {"sunny", "rainy", "windy",  "cloudy",
                        "foggy", "snowy", "stormy", "clear"};

/// The past participle of a transitive verb (its past form unless
/// irregular).
std::string_view participle(std::string_view past) {
  static const std::pair<std::string_view, std::string_view> kIrregular[] = {
      {"broke", "broken"}, {"hid", "hidden"},      {"showed", "shown"},
      {"took", "taken"},   {"drew", "drawn"},      {"threw", "thrown"},
      {"chose", "chosen"}, {"forgot", "forgotten"}};
  for (const auto &[p, pp] : kIrregular)
    if (p == past)
      return pp;
  return past;
}

/// Picks one entry of `w`.
std::string_view pick(const Words &w, Rng &rng) {
  return w[rng.uniformInt(w.size())];
}

/// Fixed per-entry associations (the regularities a model can learn).
size_t assoc(size_t index, size_t salt, size_t n) {
  return size_t(mix64(index * 0x9e37 + salt) % n);
}

std::string capitalise(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z')
    s[0] = char(s[0] - 'a' + 'A');
  return s;
}

/// One document's cast: a protagonist, a friend, a place, a theme object.
struct Cast {
  size_t hero, friendIdx, place, object;
};

std::string objectPhrase(size_t obj, Rng &rng, bool usual) {
  // Usually the object's own colour (or material): learnable.
  std::string_view colour = usual || rng.bernoulli(0.8)
                                ? kColours[assoc(obj, 1, kColours.size())]
                                : pick(kColours, rng);
  if (rng.bernoulli(0.3))
    return fmt::format("{} {}", kMaterials[assoc(obj, 2, kMaterials.size())],
                       kObjects[obj]);
  return fmt::format("{} {}", colour, kObjects[obj]);
}

std::string sentence(const Cast &c, Rng &rng) {
  std::string_view hero = kNames[c.hero], pal = kNames[c.friendIdx];
  std::string_view place = kPlaces[c.place];
  size_t obj = rng.bernoulli(0.5) ? c.object : rng.uniformInt(kObjects.size());
  size_t obj2 = rng.uniformInt(kObjects.size());
  std::string_view who = rng.bernoulli(0.7) ? hero : pal;
  const auto &verb = kVerbs[rng.uniformInt(kVerbs.size())];
  const auto &iverb = kIntrans[rng.uniformInt(kIntrans.size())];
  switch (rng.uniformInt(15)) {
  case 14:
    return fmt::format("In {}, {} {} in {}.", 1900 + rng.uniformInt(121), who,
                       iverb.second, kTowns[assoc(c.hero, 3, kTowns.size())]);
  case 0:
    return fmt::format("{} {} the {} in the {}.", who, verb.second,
                       objectPhrase(obj, rng, false), place);
  case 1:
    return fmt::format("In the {}, {} {} {}.", place, who, iverb.second,
                       pick(kAdverbs, rng));
  case 2:
    return fmt::format("The {} was {} and {}.", kObjects[obj],
                       kColours[assoc(obj, 1, kColours.size())],
                       pick(kAdjectives, rng));
  case 3:
    return fmt::format("{} wanted to {} the {}, but the {} was too {}.", who,
                       verb.first, kObjects[obj], kObjects[obj2],
                       pick(kAdjectives, rng));
  case 4:
    return fmt::format("{}, {} {} to the {} with {}.", pick(kTimes, rng), hero,
                       iverb.second, place, pal);
  case 5:
    return fmt::format("{} gave {} {} {}s.", who, who == hero ? pal : hero,
                       pick(kNumbers, rng), kObjects[obj]);
  case 6:
    return fmt::format("\"Where is the {}?\" asked {}.", kObjects[obj], who);
  case 7:
    return fmt::format("{} and {} {} a {} {} because it was {}.", hero, pal,
                       verb.second, pick(kAdjectives, rng), kObjects[obj],
                       pick(kAdjectives, rng));
  case 8:
    return fmt::format("There were {} {} {}s near the {}.", pick(kNumbers, rng),
                       pick(kAdjectives, rng), kObjects[obj], place);
  case 9:
    return fmt::format(
        "{} lives in {}, where the {} is {}.", who,
        kTowns[assoc(who == hero ? c.hero : c.friendIdx, 3, kTowns.size())],
        place, pick(kAdjectives, rng));
  case 10:
    return fmt::format("It was {} when {} {} {}.", pick(kWeather, rng), who,
                       iverb.second, pick(kAdverbs, rng));
  case 11:
    return fmt::format("{} {} {} the {} and then {}.", who, pick(kAdverbs, rng),
                       verb.second, objectPhrase(obj, rng, true), iverb.second);
  case 12:
    return fmt::format("\"I will {} the {} tomorrow,\" said {}.", verb.first,
                       kObjects[obj], who);
  default:
    return fmt::format("The {} {} was {} by {}, who {} in {}.",
                       pick(kAdjectives, rng), kObjects[obj],
                       participle(verb.second), who, iverb.second,
                       kTowns[assoc(c.hero, 3, kTowns.size())]);
  }
}

} // namespace

Status writeDemoCorpus(const std::string &path, uint64_t seed,
                       int64_t approxLines) {
  if (approxLines < 1)
    return Status::error(fmt::format(
        "writeDemoCorpus: line count must be positive, got {}", approxLines));
  Rng rng(deriveSeed(seed, 0xdead, 1));
  std::string text;
  int64_t lines = 0;
  while (lines < approxLines) {
    Cast c;
    c.hero = rng.uniformInt(kNames.size());
    c.friendIdx =
        (c.hero + 1 + rng.uniformInt(kNames.size() - 1)) % kNames.size();
    c.place = rng.uniformInt(kPlaces.size());
    c.object = rng.uniformInt(kObjects.size());
    if (!text.empty())
      text += '\n'; // blank line: document boundary
    // A document opens with its protagonist's home town and place.
    text += fmt::format("{} lives in {} and often goes to the {}.\n",
                        kNames[c.hero], kTowns[assoc(c.hero, 3, kTowns.size())],
                        kPlaces[c.place]);
    ++lines;
    int64_t n = 3 + int64_t(rng.uniformInt(10));
    for (int64_t k = 0; k < n && lines < approxLines; ++k, ++lines)
      text += capitalise(sentence(c, rng)) + "\n";
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return Status::error(fmt::format("{}: cannot create the corpus", path));
  out << text;
  out.close();
  if (!out)
    return Status::error(fmt::format("{}: write failed", path));
  return Status::ok();
}

Status writeMemoryCorpus(const std::string &path, uint64_t seed,
                         const MemoryCorpusOptions &o, int64_t *rowLength) {
  if (o.batchSize < 1 || (o.biData && o.batchSize % 2 != 0))
    return Status::error(
        fmt::format("writeMemoryCorpus: batch size {} must be positive{}",
                    o.batchSize, o.biData ? " and even for bi_data" : ""));
  if (o.reuseLen < 1 || o.seqLen <= o.reuseLen)
    return Status::error(
        fmt::format("writeMemoryCorpus: need 0 < reuse_len ({}) < seq_len ({})",
                    o.reuseLen, o.seqLen));
  if (o.firstId < 0 || o.vocabSize - o.firstId < 2)
    return Status::error(fmt::format(
        "writeMemoryCorpus: token range [{}, {}) needs at least two ids",
        o.firstId, o.vocabSize));
  // 1. Row length: a multiple of 2*reuse_len (rows start at a chunk pair, and
  //    reversed rows too), long enough for minStepsPerEpoch windows
  //    (windows i = t*reuse_len with i + seq_len <= L).
  int64_t pair = 2 * o.reuseLen;
  int64_t need =
      o.seqLen + std::max<int64_t>(0, o.minStepsPerEpoch - 1) * o.reuseLen;
  int64_t L = (need + pair - 1) / pair * pair;
  int64_t rows = o.biData ? o.batchSize / 2 : o.batchSize;
  // 2. rows*L tokens exactly, so batchify's num_step is L and nothing is
  //    dropped; one chunk per line, no blank line (no <eod>).
  Rng rng(deriveSeed(seed, 0x6d656d, 2));
  std::vector<std::vector<int64_t>> lines;
  int64_t range = o.vocabSize - o.firstId;
  for (int64_t p = 0; p < rows * L / pair; ++p) {
    std::vector<int64_t> chunk(static_cast<size_t>(o.reuseLen));
    for (int64_t &t : chunk)
      t = o.firstId + int64_t(rng.uniformInt(uint64_t(range)));
    lines.push_back(chunk);
    lines.push_back(chunk);
  }
  if (rowLength)
    *rowLength = L;
  return writeIdsCorpus(path, lines);
}

} // namespace xlnetc::rt::data
