// SPDX-License-Identifier: MIT
#include "sweep/explore.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <regex>
#include <stdexcept>

#include "common/csv_reader.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/output_files.h"
#include "config/yaml_reader.h"

namespace fastsim::sweep {
namespace {

using config::Document;
using config::MapReader;

/// The most designs one exploration evaluates.
constexpr std::size_t kMaxBudget = 10'000'000;

const double* field_of(const Summary& fields, const std::string& name) {
    for (const auto& [key, value] : fields)
        if (key == name) return &value;
    return nullptr;
}

std::string field_names(const Summary& fields) {
    std::string out;
    for (const auto& [key, value] : fields) out += (out.empty() ? "" : ", ") + key;
    return out;
}

}  // namespace

const EnumNames<SearchMethod, 4>& enum_names(SearchMethod) {
    static constexpr EnumNames<SearchMethod, 4> kNames{{{"auto", SearchMethod::automatic},
                                                        {"exhaustive", SearchMethod::exhaustive},
                                                        {"sampled", SearchMethod::sampled},
                                                        {"random", SearchMethod::random}}};
    return kNames;
}

bool Constraint::holds(double value) const {
    switch (op) {
    case Op::le: return value <= bound;
    case Op::lt: return value < bound;
    case Op::ge: return value >= bound;
    case Op::gt: return value > bound;
    }
    return false;
}

std::optional<Constraint> parse_constraint(const std::string& text) {
    static const std::regex kForm(R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*(\S+)\s*$)");
    std::smatch m;
    if (!std::regex_match(text, m, kForm)) return std::nullopt;
    const std::optional<double> bound = parse_number(m[3].str());
    if (!bound) return std::nullopt;
    Constraint c;
    c.field = m[1].str();
    const std::string op = m[2].str();
    c.op = op == "<="   ? Constraint::Op::le
           : op == "<"  ? Constraint::Op::lt
           : op == ">=" ? Constraint::Op::ge
                        : Constraint::Op::gt;
    c.bound = *bound;
    c.text = text;
    return c;
}

ExploreSpec load_explore(const std::string& path) {
    return load_explore_text(read_input_file(path, "explore file"), path);
}

ExploreSpec load_explore_text(const std::string& text, const std::string& path) {
    ExploreSpec spec;
    spec.space = load_sweep_text(text, path, FileKind::explore);
    const Document doc = Document::parse(text, path);
    MapReader top(doc, doc.root, "");
    auto explore = top.map("explore");
    if (!explore)
        throw ConfigError(top.location_of("explore"),
                          "missing section explore: (objectives: [summary fields to minimise], and optional "
                          "constraints:, budget:, seed:)");
    const auto objectives = explore->list<std::string>("objectives");
    if (!objectives.value || objectives.value->empty())
        throw ConfigError(objectives.where,
                          "expected objectives: a non-empty list of summary fields to minimise "
                          "of its runs' summary.json");
    for (const auto& o : *objectives.value) {
        if (std::find(spec.objectives.begin(), spec.objectives.end(), *o.value) != spec.objectives.end())
            throw ConfigError(o.where, "objective '" + *o.value + "' is listed twice");
        spec.objectives.push_back(*o.value);
    }
    if (const auto constraints = explore->list<std::string>("constraints"); constraints.value)
        for (const auto& c : *constraints.value) {
            const std::optional<Constraint> parsed = parse_constraint(*c.value);
            if (!parsed)
                throw ConfigError(c.where,
                                  "expected a constraint FIELD <= NUMBER (or <, >=, >), for example "
                                  "'time_ms <= 250', got '" +
                                      *c.value + "'");
            for (const Constraint& earlier : spec.constraints)
                if (earlier.field == parsed->field && earlier.op == parsed->op && earlier.bound == parsed->bound)
                    throw ConfigError(c.where, "constraint '" + *c.value + "' is listed twice");
            spec.constraints.push_back(*parsed);
        }
    if (const auto budget = explore->scalar<std::int64_t>("budget"); budget.value) {
        if (*budget.value < 1 || static_cast<std::uint64_t>(*budget.value) > kMaxBudget)
            throw ConfigError(budget.where, "expected a budget of 1 to " + std::to_string(kMaxBudget) + " designs");
        spec.budget = static_cast<std::size_t>(*budget.value);
    }
    spec.method = explore->choice<SearchMethod>("method").value.value_or(SearchMethod::automatic);
    if (const auto seed = explore->scalar<std::int64_t>("seed"); seed.value) {
        if (*seed.value < 0) throw ConfigError(seed.where, "expected a seed >= 0");
        spec.seed = static_cast<std::uint64_t>(*seed.value);
    }
    explore->finish();
    return spec;
}

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
    bool better = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] > b[i]) return false;
        better = better || a[i] < b[i];
    }
    return better;
}

namespace {

void put_bytes(std::string& out, const void* data, std::size_t size) {
    out.append(static_cast<const char*>(data), size);
}

void put_text(std::string& out, const std::string& text) {
    const std::uint64_t size = text.size();
    put_bytes(out, &size, sizeof size);
    out += text;
}

/// Reads what put_bytes and put_text wrote, in order.
class ByteReader {
public:
    explicit ByteReader(const std::string& bytes) : m_bytes(bytes) {}
    void get(void* data, std::size_t size) {
        if (m_bytes.size() - m_at < size) throw std::logic_error("decode_evaluation: bytes cut short");
        std::memcpy(data, m_bytes.data() + m_at, size);
        m_at += size;
    }
    std::string text() {
        std::uint64_t size = 0;
        get(&size, sizeof size);
        if (m_bytes.size() - m_at < size) throw std::logic_error("decode_evaluation: bytes cut short");
        std::string t = m_bytes.substr(m_at, static_cast<std::size_t>(size));
        m_at += static_cast<std::size_t>(size);
        return t;
    }
    [[nodiscard]] bool at_end() const { return m_at == m_bytes.size(); }

private:
    const std::string& m_bytes;
    std::size_t m_at = 0;
};

}  // namespace

std::string encode_evaluation(const Evaluation& e) {
    std::string out;
    out += e.pruned ? '\1' : '\0';
    put_text(out, e.error);
    const std::uint64_t fields = e.fields.size();
    put_bytes(out, &fields, sizeof fields);
    for (const auto& [name, value] : e.fields) {
        put_text(out, name);
        put_bytes(out, &value, sizeof value);
    }
    return out;
}

Evaluation decode_evaluation(const std::string& bytes) {
    ByteReader in(bytes);
    Evaluation e;
    char pruned = 0;
    in.get(&pruned, 1);
    e.pruned = pruned != 0;
    e.error = in.text();
    std::uint64_t fields = 0;
    in.get(&fields, sizeof fields);
    for (std::uint64_t f = 0; f < fields; ++f) {
        std::string name = in.text();
        double value = 0;
        in.get(&value, sizeof value);
        e.fields.emplace_back(std::move(name), value);
    }
    if (!in.at_end()) throw std::logic_error("decode_evaluation: bytes left over");
    return e;
}

bool ParetoFront::add(std::size_t design, const std::vector<double>& objectives) {
    for (const std::vector<double>& m : m_objectives)
        if (dominates(m, objectives)) return false;
    for (std::size_t i = m_members.size(); i-- > 0;)
        if (dominates(objectives, m_objectives[i])) {
            m_members.erase(m_members.begin() + static_cast<std::ptrdiff_t>(i));
            m_objectives.erase(m_objectives.begin() + static_cast<std::ptrdiff_t>(i));
        }
    m_members.push_back(design);
    m_objectives.push_back(objectives);
    return true;
}

Explorer::Explorer(const ExploreSpec& spec, Evaluate evaluate, OnDesign on_design, Shard shard)
    : Explorer(
          spec,
          [evaluate = std::move(evaluate)](const std::vector<SweepPoint>& points) {
              std::vector<Evaluation> out;
              out.reserve(points.size());
              for (const SweepPoint& p : points) out.push_back(evaluate(p));
              return out;
          },
          std::move(on_design), shard) {}

Explorer::Explorer(const ExploreSpec& spec, EvaluateBatch evaluate, OnDesign on_design, Shard shard, std::size_t batch)
    : m_spec(spec),
      m_evaluate(std::move(evaluate)),
      m_on_design(std::move(on_design)),
      m_shard(shard),
      m_batch(std::max<std::size_t>(1, batch)),
      m_points(point_count(spec.space)) {}

SearchMethod Explorer::method() const {
    if (m_spec.method != SearchMethod::automatic) return m_spec.method;
    return m_points <= m_spec.budget ? SearchMethod::exhaustive : SearchMethod::sampled;
}

std::size_t Explorer::planned() const {
    if (method() != SearchMethod::exhaustive) return std::min(m_spec.budget, m_points);
    return m_points / m_shard.count + (m_points % m_shard.count >= m_shard.k ? 1 : 0);
}

std::vector<Design> Explorer::evaluate(const std::vector<std::size_t>& indices) {
    std::vector<SweepPoint> points;
    points.reserve(indices.size());
    for (const std::size_t i : indices) points.push_back(point_at(m_spec.space, i));
    std::vector<Evaluation> evaluations = m_evaluate(points);
    if (evaluations.size() != points.size())
        throw std::logic_error("Explorer: a batch of " + std::to_string(points.size()) + " designs gave " +
                               std::to_string(evaluations.size()) + " evaluations");
    std::vector<Design> designs;
    designs.reserve(points.size());
    for (std::size_t k = 0; k < points.size(); ++k)
        designs.push_back(design_of(indices[k], points[k], std::move(evaluations[k])));
    return designs;
}

Design Explorer::design_of(std::size_t index, const SweepPoint& point, Evaluation e) const {
    Design d;
    d.index = index;
    d.id = point.id;
    d.fields = std::move(e.fields);
    d.error = std::move(e.error);
    if (!d.error.empty()) return d;
    for (const std::string& name : m_spec.objectives) {
        const double* value = field_of(d.fields, name);
        if (!value) {  // e.g. area_mm2 of a design whose energy table has no area
            d.error = "its run has no '" + name + "' (" + field_names(d.fields) + ")";
            break;
        }
        // As designs.csv holds it, so a resumed run compares the values an uninterrupted one does.
        d.objectives.push_back(*parse_number(format_number(*value)));
    }
    for (const Constraint& c : m_spec.constraints) {
        if (!d.error.empty()) break;
        const double* value = field_of(d.fields, c.field);
        if (!value)
            d.error = "its run has no '" + c.field + "' for " + c.text + " (" + field_names(d.fields) + ")";
        else if (!c.holds(*value))
            d.error = "breaks " + c.text + " (" + format_number(*value) + ")";
    }
    d.feasible = d.error.empty();
    if (!d.feasible) d.objectives.clear();
    return d;
}

void Explorer::consider(std::vector<Design>& designs, ParetoFront& front, Design design,
                        std::vector<std::size_t>& grew) {
    if (m_on_design) m_on_design(design);
    design.fields.clear();  // written; a million designs' summaries need not stay in memory
    designs.push_back(std::move(design));
    const Design& d = designs.back();
    if (d.feasible && front.add(designs.size() - 1, d.objectives)) grew.push_back(d.index);
}

std::vector<Design> Explorer::run(std::vector<Design> done) {
    std::vector<Design> designs;
    ParetoFront front;
    std::unordered_set<std::size_t> evaluated;
    std::vector<std::size_t> grew;  // indices that joined the front, to refine around
    for (Design& d : done) {
        evaluated.insert(d.index);
        designs.push_back(std::move(d));
        if (designs.back().feasible && front.add(designs.size() - 1, designs.back().objectives))
            grew.push_back(designs.back().index);
    }
    // `batch`'s designs evaluated together, then considered in its order; a batch lists each
    // index once and none evaluated before.
    const auto visit_all = [&](const std::vector<std::size_t>& batch) {
        if (batch.empty()) return;
        for (Design& d : evaluate(batch)) consider(designs, front, std::move(d), grew);
    };
    std::vector<std::size_t> batch;
    if (method() == SearchMethod::exhaustive) {
        for (std::size_t i = 0; i < m_points; ++i) {
            if (!m_shard.contains(i) || !evaluated.insert(i).second) continue;
            batch.push_back(i);
            if (batch.size() == m_batch) {
                visit_all(batch);
                batch.clear();
            }
        }
        visit_all(batch);
        return designs;
    }
    // Sampled: a fifth of the budget drawn uniformly (the same draws for a seed, so a resumed run
    // continues it), then one axis step at a time from the front, then more draws if the front
    // has no unvisited neighbour left. A batch never takes the designs past the budget.
    std::mt19937_64 random(m_spec.seed);
    std::uniform_int_distribution<std::size_t> any(0, m_points - 1);
    std::unordered_set<std::size_t> drawn;
    const std::size_t sample =
        method() == SearchMethod::random ? m_spec.budget : std::max<std::size_t>(1, m_spec.budget / 5);
    const auto room = [&] { return designs.size() + batch.size() < m_spec.budget; };
    const auto add = [&](std::size_t index) {
        if (evaluated.insert(index).second) batch.push_back(index);
    };
    while (drawn.size() < sample && designs.size() < m_spec.budget && drawn.size() < m_points) {
        batch.clear();
        while (drawn.size() < sample && room() && drawn.size() < m_points && batch.size() < m_batch) {
            const std::size_t i = any(random);
            if (drawn.insert(i).second) add(i);
        }
        visit_all(batch);
    }
    if (method() == SearchMethod::random) return designs;
    std::deque<std::size_t> around;
    for (const std::size_t member : front.members()) around.push_back(designs[member].index);
    grew.clear();
    while (designs.size() < m_spec.budget && evaluated.size() < m_points) {
        batch.clear();
        if (around.empty()) {
            const std::size_t i = any(random);
            if (drawn.insert(i).second) add(i);
        } else {
            const std::size_t centre = around.front();
            around.pop_front();
            // A design a later one dominated has left the front: its neighbours can wait.
            const bool still_on_front = std::any_of(front.members().begin(), front.members().end(),
                                                    [&](std::size_t m) { return designs[m].index == centre; });
            if (!still_on_front) continue;
            const std::vector<std::size_t> choices = axis_choices(m_spec.space, centre);
            for (std::size_t a = 0; a < choices.size() && room(); ++a)
                for (const int step : {-1, 1}) {
                    if ((step < 0 && choices[a] == 0) ||
                        (step > 0 && choices[a] + 1 >= m_spec.space.axes[a].values.size()))
                        continue;
                    std::vector<std::size_t> next = choices;
                    next[a] = step < 0 ? next[a] - 1 : next[a] + 1;
                    if (room()) add(point_index(m_spec.space, next));
                }
        }
        visit_all(batch);
        for (const std::size_t index : grew) around.push_back(index);
        grew.clear();
    }
    return designs;
}

}  // namespace fastsim::sweep
