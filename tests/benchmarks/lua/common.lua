-- Shared by the scripts: one wrk thread per connection (-t N -c N), so each thread's state is
-- one connection's. Each thread takes line `id` of the data file named by BENCH_DATA: its
-- tokens and games, owned by that connection alone (no two requests ever race on one game).
threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

function own_line()
  local i = 0
  for line in io.lines(os.getenv("BENCH_DATA")) do
    i = i + 1
    if i == id then
      local words = {}
      for word in line:gmatch("%S+") do
        table.insert(words, word)
      end
      return words
    end
  end
  error("no line " .. id .. " in " .. os.getenv("BENCH_DATA"))
end

failed = 0
function count_failure(status, body)
  if status >= 300 then
    failed = failed + 1
    if failed <= 2 then
      io.stderr:write(status .. " " .. body .. "\n")
    end
  end
end

-- The summary the Python side parses: one JSON line.
function done(summary, latency, requests)
  local failures = 0
  for _, t in ipairs(threads) do
    failures = failures + (t:get("failed") or 0)
  end
  io.write(string.format(
    '{"requests": %d, "seconds": %.6f, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"status_errors": %d, "socket_errors": %d, "failed": %d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    latency.max, summary.errors.status, summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout, failures))
end
