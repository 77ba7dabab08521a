-- count.lua - shared by the wrk scripts: counts 2xx and non-2xx responses
-- per thread (response hook) and prints one machine-readable line at the
-- end (done hook), which bench/run.sh parses:
--   BENCH requests=N ok2xx=N non2xx=N sockerr=N rps=F p50_us=N p99_us=N
local threads = {}

function setup(thread)
	table.insert(threads, thread)
end

function init(args)
	ok2xx = 0
	non2xx = 0
end

function response(status, headers, body)
	if status >= 200 and status < 300 then
		ok2xx = ok2xx + 1
	else
		non2xx = non2xx + 1
	end
end

function done(summary, latency, requests)
	local ok, bad = 0, 0
	for _, t in ipairs(threads) do
		ok = ok + t:get("ok2xx")
		bad = bad + t:get("non2xx")
	end
	local e = summary.errors
	local sock = e.connect + e.read + e.write + e.timeout
	io.write(string.format("BENCH requests=%d ok2xx=%d non2xx=%d sockerr=%d rps=%.1f p50_us=%d p99_us=%d\n",
		summary.requests, ok, bad, sock, summary.requests / (summary.duration / 1e6),
		latency:percentile(50), latency:percentile(99)))
end
