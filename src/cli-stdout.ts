/**
 * The CLI's stdout policy, set before anything else: `gpuindex postings ... | head` closes
 * stdout early, and that is not an error. First, because every worker thread pipes its own
 * stdout into this one (adding an 'error' listener each, without the max-listeners warning):
 * added after 15 parse workers started ahead, this listener drew Node's
 * MaxListenersExceededWarning onto stderr.
 */
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
