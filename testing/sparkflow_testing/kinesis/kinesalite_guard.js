// Runs kinesalite's command line (the path given first, then its own options) with one change:
// a request whose client went away before its body arrived no longer ends the server.
//
// kinesalite 3.3.3 throws every request stream error (`req.on('error', err => { throw err })`).
// Since Node 16 a connection reset mid-body emits such an error ('aborted', ECONNRESET), so one
// reset client stopped the whole endpoint, which real Kinesis never does. The Kinesis network-fault
// tests reset connections on purpose. Any other uncaught error still ends the process.
'use strict'

process.on('uncaughtException', function (err) {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    console.error('kinesalite-guard: a client reset its connection mid-request; the request is dropped')
    return
  }
  console.error(err)
  process.exit(1)
})

const cli = process.argv.splice(2, 1)[0]
require(cli)
