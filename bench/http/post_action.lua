-- post_action.lua - wrk script: POST /api/tasks/{id}/actions (the URL given
-- to wrk) with a small JSON action and one log, as an agent logs a step.
package.path = debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua;" .. package.path
require("count")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"action_type":"cli","summary":"ran export.sh","status":"completed",' ..
	'"input_data":{"argv":["export.sh","-v"]},"output_data":"wrote report.pdf",' ..
	'"duration_ms":12,"logs":[{"content":"exit 0"}]}'
