package oltp

import "strconv"

// insertSession is oltp_insert (§1.6): one text INSERT into a uniform
// table per event. With auto_inc the id is sent as 0 so AUTO_INCREMENT
// assigns it; without, it is the run's unique sequence shifted into the
// signed INT range.
type insertSession struct {
	env
	c, pad [cLen]byte
	buf    []byte
}

func (s *insertSession) init(*conn) error { return nil }
func (s *insertSession) done(*conn) error { return nil }

func (s *insertSession) event(c *conn) error {
	t := s.table()
	k := s.id()
	s.r.Digits(s.c[:cLen], 11)
	s.r.Digits(s.pad[:padLen], 11)
	var id int64
	if !s.o.AutoInc {
		id = int64(s.uniq.Next()) - 2147483648
	}
	b := append(s.buf[:0], "INSERT INTO sbtest"...)
	b = strconv.AppendInt(b, int64(t), 10)
	b = append(b, " (id, k, c, pad) VALUES ("...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, k, 10)
	b = append(b, ", '"...)
	b = append(b, s.c[:cLen]...)
	b = append(b, "', '"...)
	b = append(b, s.pad[:padLen]...)
	b = append(b, "')"...)
	s.buf = b
	return c.query(string(b), false)
}
