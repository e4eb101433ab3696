package testbin

import "sync"

// Concurrently runs work(0) … work(n-1) at once, each on a goroutine of
// its own, and returns the errors they ended with, once all have ended.
func Concurrently(n int, work func(i int) error) []error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := work(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
