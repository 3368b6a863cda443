/* The single-call entry of the dynamics: one C call from Python into a compiled kernel.
 *
 *     call(address, P, rows, cols, x0[, x1, x2[, g[, D, F, to]]]) -> ndarray (rows, cols),
 *                                                  or (rows,) for cols = -1, or None
 *
 * or, for a small batch (every x a 2-D array with the same R <= MAX_ROWS rows), one kernel call
 * per row into an ndarray (R, rows[, cols]).
 *
 * ``address``: a numba ``cfunc`` of :mod:`.entries` (``int64 f(P, nP, x0, n0, x1, n1, x2, n2,
 * g, ng, out, nout)`` on float64 pointers, returning 0 for OK); ``P``: the packed tree (:mod:`.tree`),
 * a C-contiguous float64 array; ``x0 .. x2``: one configuration each (q, q', q'' or tau), as a
 * 1-D float64 or float32 ndarray (native byte order, any stride, read-only or not) or a list or
 * tuple of Python floats and ints. A float64 contiguous array is read in place; the other forms
 * are copied to float64 on the stack. ``g``: gravity (3 numbers in the same forms; ng = 0 when
 * it is None or not given: the model's). The kernel checks the lengths and finiteness.
 *
 * ``D``, ``F``: the joints' losses ``D x1 + F sign(x1)`` (viscous damping and Coulomb friction
 * of the velocities x1; each None or a C-contiguous float64 array of x1's length), added to the
 * output (``to`` = 0: inverse dynamics) or subtracted from x2 before the call (``to`` = 2:
 * forward dynamics, ``q'' = FD(q, q', tau - losses)``). Measured on the iiwa: one inverse
 * dynamics call with damping and friction 2.9 us when numpy added them after the call, against
 * 0.86 us without them.
 *
 * None means "not taken here": another input form, a length over CAP, or a status other than
 * OK (bad length, nan or inf, overflow). The Python caller then takes its general path, which
 * checks the inputs and raises the clear error. Nothing here raises for user input.
 *
 * Why C: numba's own entry unboxes each array into a reference-counted view (~0.1 us each) and
 * the Python around it checked types and allocated the result; that left one call of the 3-DOF
 * mobile manipulator at ~1.5x Pinocchio's ``rnea``. Built as an optional extension (setup.py):
 * without a C compiler the Python fast path of :mod:`simbench.dynamics.rnea` runs instead.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_20_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>

typedef int64_t (*kernel_fn)(double *, int64_t, double *, int64_t, double *, int64_t,
                             double *, int64_t, double *, int64_t, double *, int64_t);

/* the longest configuration copied to the stack, and the most rows of a small batch (larger
 * ones take the Python path: the threaded span kernels) */
#define CAP 512
#define MAX_ROWS 32

/* n entries of stride s and numpy type `type` at d, as float64: *ptr points at d itself
 * (contiguous float64) or at buf; returns n, or -1 if not taken */
static Py_ssize_t gather_strided(const char *d, Py_ssize_t n, Py_ssize_t s, int type,
                                 double *buf, double **ptr)
{
    if (type == NPY_DOUBLE && s == (Py_ssize_t)sizeof(double)) {
        *ptr = (double *)d;
        return n;
    }
    if (n > CAP)
        return -1;
    if (type == NPY_DOUBLE)
        for (Py_ssize_t i = 0; i < n; i++)
            buf[i] = *(const double *)(d + i * s);
    else if (type == NPY_FLOAT)
        for (Py_ssize_t i = 0; i < n; i++)
            buf[i] = *(const float *)(d + i * s);
    else
        return -1;
    *ptr = buf;
    return n;
}

/* x as float64 (see gather_strided): a 1-D float64 or float32 ndarray, or a list or tuple of
 * Python floats and ints */
static Py_ssize_t gather(PyObject *x, double *buf, double **ptr)
{
    if (PyArray_CheckExact(x)) {
        PyArrayObject *a = (PyArrayObject *)x;
        if (PyArray_NDIM(a) != 1 || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a))
            return -1;
        return gather_strided(PyArray_BYTES(a), PyArray_DIM(a, 0), PyArray_STRIDE(a, 0),
                              PyArray_TYPE(a), buf, ptr);
    }
    if (PyList_CheckExact(x) || PyTuple_CheckExact(x)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(x);
        if (n > CAP)
            return -1;
        PyObject **items = PySequence_Fast_ITEMS(x);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *o = items[i];
            if (PyFloat_Check(o)) {
                buf[i] = PyFloat_AS_DOUBLE(o);
            } else if (PyLong_CheckExact(o)) {
                buf[i] = PyLong_AsDouble(o);
                if (buf[i] == -1.0 && PyErr_Occurred()) {  /* too large for float64 */
                    PyErr_Clear();
                    return -1;
                }
            } else {
                return -1;
            }
        }
        *ptr = buf;
        return n;
    }
    return -1;
}

/* D and F (see the top) as pointers, NULL for None; -1 if either is another object or not n long */
static int loss_arrays(PyObject *D, PyObject *F, Py_ssize_t n, const double **d, const double **f)
{
    PyObject *in[2] = {D, F};
    const double **ptr[2] = {d, f};
    for (int i = 0; i < 2; i++) {
        *ptr[i] = NULL;
        if (in[i] == Py_None)
            continue;
        PyArrayObject *a = (PyArrayObject *)in[i];
        if (!PyArray_CheckExact(in[i]) || PyArray_TYPE(a) != NPY_DOUBLE || PyArray_NDIM(a) != 1 ||
            !PyArray_IS_C_CONTIGUOUS(a) || PyArray_DIM(a, 0) != n)
            return -1;
        *ptr[i] = (const double *)PyArray_DATA(a);
    }
    return 0;
}

/* y += s (d v + f sign(v)), n entries (d or f NULL: that term left out) */
static void add_losses(const double *d, const double *f, const double *v, Py_ssize_t n, double s,
                       double *y)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        double l = 0.0;
        if (d != NULL)
            l = d[i] * v[i];
        if (f != NULL)
            l += f[i] * (double)((v[i] > 0.0) - (v[i] < 0.0));
        y[i] += s * l;
    }
}

/* x2 (n entries at *x) less the losses of v, in buf (x2 itself is the user's array) */
static void less_losses(const double *d, const double *f, const double *v, Py_ssize_t n,
                        double *buf, double **x)
{
    if (*x != buf)
        for (Py_ssize_t i = 0; i < n; i++)
            buf[i] = (*x)[i];
    *x = buf;
    add_losses(d, f, v, n, -1.0, buf);
}

/* the number of rows of x if it is a 2-D float64 or float32 ndarray (a small batch), else -1 */
static Py_ssize_t batch_rows(PyObject *x)
{
    if (!PyArray_CheckExact(x))
        return -1;
    PyArrayObject *a = (PyArrayObject *)x;
    if (PyArray_NDIM(a) != 2 || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a) ||
        PyArray_DIM(a, 0) > MAX_ROWS)
        return -1;
    return PyArray_DIM(a, 0);
}

/* row r of the 2-D array x (see gather_strided) */
static Py_ssize_t gather_row(PyObject *x, Py_ssize_t r, double *buf, double **ptr)
{
    PyArrayObject *a = (PyArrayObject *)x;
    return gather_strided(PyArray_BYTES(a) + r * PyArray_STRIDE(a, 0), PyArray_DIM(a, 1),
                          PyArray_STRIDE(a, 1), PyArray_TYPE(a), buf, ptr);
}

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5 && nargs != 7 && nargs != 8 && nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "call(address, P, rows, cols, x0[, x1, x2[, g[, D, F, to]]])");
        return NULL;
    }
    kernel_fn fn = (kernel_fn)PyLong_AsVoidPtr(args[0]);
    if (fn == NULL && PyErr_Occurred())
        return NULL;
    Py_ssize_t rows = PyLong_AsSsize_t(args[2]);
    if (rows == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t cols = PyLong_AsSsize_t(args[3]);
    if (cols == -1 && PyErr_Occurred())
        return NULL;
    if (fn == NULL || rows < 0 || cols < -1 || !PyArray_CheckExact(args[1]) ||
        PyArray_TYPE((PyArrayObject *)args[1]) != NPY_DOUBLE ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)args[1]) ||
        !PyArray_ISWRITEABLE((PyArrayObject *)args[1])) {
        PyErr_SetString(PyExc_TypeError, "call: expected a kernel address, the packed tree "
                        "(writable C-contiguous float64), rows >= 0 and cols >= -1");
        return NULL;
    }
    double *P = (double *)PyArray_DATA((PyArrayObject *)args[1]);
    int64_t nP = PyArray_SIZE((PyArrayObject *)args[1]);
    int k = nargs == 5 ? 1 : 3;
    double b[4][CAP], *x[3] = {NULL, NULL, NULL}, *g = NULL;
    Py_ssize_t n[3] = {0, 0, 0}, ng = 0;
    /* gravity, for every row (None: the model's) */
    if (nargs >= 8 && args[7] != Py_None && (ng = gather(args[7], b[3], &g)) != 3)
        Py_RETURN_NONE;
    /* the joints' losses: to = 0 (add to the output) or 2 (subtract from x2), -1 none */
    const double *ld = NULL, *lf = NULL;
    long to = -1;
    if (nargs == 11 && (args[8] != Py_None || args[9] != Py_None)) {
        to = PyLong_AsLong(args[10]);
        if (to == -1 && PyErr_Occurred())
            return NULL;
        if (to != 0 && to != 2) {
            PyErr_SetString(PyExc_ValueError, "call: 'to' must be 0 (the output) or 2 (x2)");
            return NULL;
        }
    }
    npy_intp dims[3];
    int nd = 0;

    /* a small batch: every input a 2-D array with the same number of rows */
    Py_ssize_t R = batch_rows(args[4]);
    for (int i = 1; i < k && R >= 0; i++)
        if (batch_rows(args[4 + i]) != R)
            R = -1;
    if (R >= 0)
        dims[nd++] = R;
    dims[nd++] = rows;
    if (cols >= 0)
        dims[nd++] = cols;
    PyObject *out = NULL;
    if (R < 0) {   /* one configuration */
        for (int i = 0; i < k; i++)
            if ((n[i] = gather(args[4 + i], b[i], &x[i])) < 0)
                Py_RETURN_NONE;
        if (to >= 0) {
            if (loss_arrays(args[8], args[9], n[1], &ld, &lf) < 0 || n[2] != n[1] ||
                n[1] > CAP)
                Py_RETURN_NONE;
            if (to == 2)
                less_losses(ld, lf, x[1], n[1], b[2], &x[2]);
        }
        out = PyArray_SimpleNew(nd, dims, NPY_DOUBLE);
        if (out == NULL)
            return NULL;
        double *o = (double *)PyArray_DATA((PyArrayObject *)out);
        npy_intp size = PyArray_SIZE((PyArrayObject *)out);
        if (fn(P, nP, x[0], n[0], x[1], n[1], x[2], n[2], g, ng, o, size) != 0) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        if (to == 0)
            add_losses(ld, lf, x[1], n[1], 1.0, o);
        return out;
    }
    out = PyArray_SimpleNew(nd, dims, NPY_DOUBLE);
    if (out == NULL)
        return NULL;
    Py_ssize_t each = rows * (cols >= 0 ? cols : 1);
    double *o = (double *)PyArray_DATA((PyArrayObject *)out);
    for (Py_ssize_t r = 0; r < R; r++) {
        for (int i = 0; i < k; i++)
            if ((n[i] = gather_row(args[4 + i], r, b[i], &x[i])) < 0)
                goto declined;
        if (to >= 0) {
            if (loss_arrays(args[8], args[9], n[1], &ld, &lf) < 0 || n[2] != n[1] ||
                n[1] > CAP)
                goto declined;
            if (to == 2)
                less_losses(ld, lf, x[1], n[1], b[2], &x[2]);
        }
        if (fn(P, nP, x[0], n[0], x[1], n[1], x[2], n[2], g, ng, o + r * each, each) != 0)
            goto declined;
        if (to == 0)
            add_losses(ld, lf, x[1], n[1], 1.0, o + r * each);
    }
    return out;
declined:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL,
     "call(address, P, rows, cols, x0[, x1, x2[, g]]): a single-call dynamics kernel "
     "(see the source)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_call", "The single-call entry of the dynamics kernels.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__call(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "MAX_ROWS", MAX_ROWS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
