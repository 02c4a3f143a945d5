package merchant

// SetAuthTrace makes s report each step of authenticate to f (nil: none).
func SetAuthTrace(s *Service, f func(step string)) { s.authTrace = f }
